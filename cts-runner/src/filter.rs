//! The shell-style patterns of `--filter` (suites, Khronos tests).

/// `*`, `?` and `[...]` globs, as the shell's.
pub fn glob(pattern: &str, s: &str) -> bool {
    fn in_set(set: &[u8], c: u8) -> bool {
        let mut i = 0;
        while i < set.len() {
            if i + 2 < set.len() && set[i + 1] == b'-' {
                if (set[i]..=set[i + 2]).contains(&c) {
                    return true;
                }
                i += 3;
            } else {
                if set[i] == c {
                    return true;
                }
                i += 1;
            }
        }
        false
    }
    fn m(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => m(&p[1..], s) || (!s.is_empty() && m(p, &s[1..])),
            (Some(b'?'), Some(_)) => m(&p[1..], &s[1..]),
            // `[abc]`, `[a-z]`, `[!abc]`: one character of (or not of) a set; a `]`
            // right after the `[` belongs to the set. Without a closing `]`, `[` is
            // an ordinary character.
            (Some(b'['), Some(&c)) if p.len() > 2 && p[2..].contains(&b']') => {
                let close = 2 + p[2..].iter().position(|&b| b == b']').unwrap_or(0);
                let (negated, set) = match &p[1..close] {
                    [b'!', rest @ ..] if !rest.is_empty() => (true, rest),
                    set => (false, set),
                };
                in_set(set, c) != negated && m(&p[close + 1..], &s[1..])
            }
            (Some(a), Some(b)) if a == b => m(&p[1..], &s[1..]),
            _ => false,
        }
    }
    m(pattern.as_bytes(), s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs() {
        assert!(glob("async_*", "async_copy_global_to_local"));
        assert!(glob("*2D", "async_copy_local_to_global2D"));
        assert!(!glob("async_*", "prefetch"));
        assert!(glob("pre?etch", "prefetch"));
        assert!(glob("vstore_half_rt[npz]", "vstore_half_rtz"));
        assert!(!glob("vstore_half_rt[npz]", "vstore_half_rte"));
        assert!(glob("vstore_half_rt[!e]", "vstore_half_rtn"));
        assert!(!glob("vstore_half_rt[!e]", "vstore_half_rte"));
        assert!(glob("test[0-9]", "test7"));
        assert!(!glob("test[0-9]", "testx"));
        assert!(glob("a[]b", "a[]b"));
    }
}
