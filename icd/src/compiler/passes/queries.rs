//! The builtins that read the work-item context, listed once: the rewrite renames their
//! calls to our C implementations (builtins/clc/workitem.c, which take the context as
//! an extra last argument) and declares those, and the analyses ask what an answer
//! depends on (`Answer`).

/// What a query's answer depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The range alone: the same everywhere (`get_work_dim`, global sizes and offset).
    Range,
    /// The work-item's place in the range, not how the range is cut into groups
    /// (`get_global_id`, `get_global_linear_id`).
    GlobalItem,
    /// The group: the same in every work-item of it (group ids, local and enqueued
    /// sizes, the number of groups).
    Group,
    /// The work-item's place in its group (`get_local_id`, `get_local_linear_id`).
    Item,
    /// Sub-group queries and barriers.
    Other,
}

impl Answer {
    /// Answers that do not depend on how the range is cut into groups.
    pub(crate) fn group_blind(self) -> bool {
        matches!(self, Answer::Range | Answer::GlobalItem)
    }

    /// Answers the launcher of a kernel running several groups per call sets group by
    /// group (`GroupUse::Ids`).
    pub(crate) fn group_ids(self) -> bool {
        matches!(self, Answer::Group | Answer::Item)
    }
}

/// One builtin that reads the context.
pub(crate) struct Query {
    /// clang's mangled name.
    pub(crate) mangled: &'static str,
    /// Our implementation, taking the context as an extra last argument.
    pub(crate) ours: &'static str,
    /// Its IR declaration: return type, then the parameter list.
    pub(crate) signature: &'static str,
    pub(crate) answer: Answer,
}

// A sub-group is the whole work-group (builtins/clc/workitem.c); barriers reach the
// driver through the group in the context, with no TLS lookup.
pub(crate) const QUERIES: &[Query] = &[
    Query {
        mangled: "_Z12get_work_dimv",
        ours: "__ferrocl_get_work_dim",
        signature: "i32 (ptr)",
        answer: Answer::Range,
    },
    Query {
        mangled: "_Z15get_global_sizej",
        ours: "__ferrocl_get_global_size",
        signature: "i64 (i32, ptr)",
        answer: Answer::Range,
    },
    Query {
        mangled: "_Z13get_global_idj",
        ours: "__ferrocl_get_global_id",
        signature: "i64 (i32, ptr)",
        answer: Answer::GlobalItem,
    },
    Query {
        mangled: "_Z14get_local_sizej",
        ours: "__ferrocl_get_local_size",
        signature: "i64 (i32, ptr)",
        answer: Answer::Group,
    },
    Query {
        mangled: "_Z23get_enqueued_local_sizej",
        ours: "__ferrocl_get_enqueued_local_size",
        signature: "i64 (i32, ptr)",
        answer: Answer::Group,
    },
    Query {
        mangled: "_Z12get_local_idj",
        ours: "__ferrocl_get_local_id",
        signature: "i64 (i32, ptr)",
        answer: Answer::Item,
    },
    Query {
        mangled: "_Z14get_num_groupsj",
        ours: "__ferrocl_get_num_groups",
        signature: "i64 (i32, ptr)",
        answer: Answer::Group,
    },
    Query {
        mangled: "_Z12get_group_idj",
        ours: "__ferrocl_get_group_id",
        signature: "i64 (i32, ptr)",
        answer: Answer::Group,
    },
    Query {
        mangled: "_Z17get_global_offsetj",
        ours: "__ferrocl_get_global_offset",
        signature: "i64 (i32, ptr)",
        answer: Answer::Range,
    },
    Query {
        mangled: "_Z20get_global_linear_idv",
        ours: "__ferrocl_get_global_linear_id",
        signature: "i64 (ptr)",
        answer: Answer::GlobalItem,
    },
    Query {
        mangled: "_Z19get_local_linear_idv",
        ours: "__ferrocl_get_local_linear_id",
        signature: "i64 (ptr)",
        answer: Answer::Item,
    },
    Query {
        mangled: "_Z18get_sub_group_sizev",
        ours: "__ferrocl_get_sub_group_size",
        signature: "i32 (ptr)",
        answer: Answer::Other,
    },
    Query {
        mangled: "_Z22get_max_sub_group_sizev",
        ours: "__ferrocl_get_max_sub_group_size",
        signature: "i32 (ptr)",
        answer: Answer::Other,
    },
    Query {
        mangled: "_Z18get_num_sub_groupsv",
        ours: "__ferrocl_get_num_sub_groups",
        signature: "i32 (ptr)",
        answer: Answer::Other,
    },
    Query {
        mangled: "_Z27get_enqueued_num_sub_groupsv",
        ours: "__ferrocl_get_num_sub_groups",
        signature: "i32 (ptr)",
        answer: Answer::Other,
    },
    Query {
        mangled: "_Z16get_sub_group_idv",
        ours: "__ferrocl_get_sub_group_id",
        signature: "i32 (ptr)",
        answer: Answer::Other,
    },
    Query {
        mangled: "_Z22get_sub_group_local_idv",
        ours: "__ferrocl_get_sub_group_local_id",
        signature: "i32 (ptr)",
        answer: Answer::Other,
    },
    Query { mangled: "_Z7barrierj", ours: "__ferrocl_barrier", signature: "void (i32, ptr)", answer: Answer::Other },
    Query {
        mangled: "_Z18work_group_barrierj",
        ours: "__ferrocl_barrier",
        signature: "void (i32, ptr)",
        answer: Answer::Other,
    },
    Query {
        mangled: "_Z18work_group_barrierj12memory_scope",
        ours: "__ferrocl_barrier_scope",
        signature: "void (i32, i32, ptr)",
        answer: Answer::Other,
    },
    Query {
        mangled: "_Z17sub_group_barrierj",
        ours: "__ferrocl_barrier",
        signature: "void (i32, ptr)",
        answer: Answer::Other,
    },
    Query {
        mangled: "_Z17sub_group_barrierj12memory_scope",
        ours: "__ferrocl_barrier_scope",
        signature: "void (i32, i32, ptr)",
        answer: Answer::Other,
    },
];

/// The query clang calls by this mangled name.
pub(crate) fn by_mangled(mangled: &str) -> Option<&'static Query> {
    QUERIES.iter().find(|q| q.mangled == mangled)
}

/// What the answer of one of our implementations (`__ferrocl_get_*`) depends on.
pub(crate) fn answer_of_ours(ours: &str) -> Option<Answer> {
    QUERIES.iter().find(|q| q.ours == ours).map(|q| q.answer)
}

/// Queries that take a dimension and answer a `size_t` (`get_global_id(d)`, ...).
pub(crate) fn by_dimension() -> impl Iterator<Item = &'static Query> {
    QUERIES.iter().filter(|q| q.signature == "i64 (i32, ptr)")
}
