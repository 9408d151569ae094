//! The module graphs of the driver and of `cts-runner`, read from their source. In the
//! driver dependencies point one way, `api -> core -> {compiler, exec}`: nothing below
//! `api` imports it, and `compiler` and `exec` never import `core` (core passes them
//! what they need). In both crates no module depends on itself through others. A module
//! is one file; it depends on another when it names it through `crate::` or `super::`
//! paths (test modules excluded: they may use whatever they test).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// `api/icd.rs` -> "api/icd"; `exec/copies/mod.rs` -> "exec/copies"; `lib.rs` -> "".
fn module_name(rel: &Path) -> String {
    let mut parts: Vec<String> = rel.with_extension("").iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts.join("/")
}

fn sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            // Unit tests sit at the end of a file.
            let code = text.split("#[cfg(test)]").next().unwrap();
            let code: String = code.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n");
            out.insert(module_name(p.strip_prefix(root).unwrap()), code);
        }
    }
}

/// The longest module that `base` + `segments` starts with.
fn resolve(modules: &BTreeMap<String, String>, base: &[&str], segments: &[&str]) -> Option<String> {
    (1..=segments.len()).rev().find_map(|n| {
        let name = base.iter().chain(&segments[..n]).copied().collect::<Vec<_>>().join("/");
        modules.contains_key(&name).then_some(name)
    })
}

/// Paths after `crate::` or `super::`, with `{a, b::c}` groups expanded one level.
fn paths(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    for (at, _) in code.match_indices(prefix) {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        let head: String = rest.chars().take_while(|&c| ident(c)).collect();
        let head: Vec<String> = head.split("::").filter(|s| !s.is_empty()).map(String::from).collect();
        let after = &rest[rest.find(|c: char| !ident(c)).unwrap_or(rest.len())..];
        if let (Some(group), true) = (after.strip_prefix('{'), rest.starts_with(head.join("::").as_str())) {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let mut p = head.clone();
                p.extend(item.trim().split("::").filter(|s| !s.is_empty() && *s != "self").map(String::from));
                out.push(p);
            }
        }
        out.push(head);
    }
    out
}

/// The module graph of the crate whose sources are in `root`.
fn graph_of(root: &Path) -> Graph {
    let mut modules = BTreeMap::new();
    sources(root, root, &mut modules);
    let mut g = Graph::new();
    for (name, code) in &modules {
        let me: Vec<&str> = if name.is_empty() { vec![] } else { name.split('/').collect() };
        // `super` of `a/b/c` is `a/b`, also for `a/b/c/mod.rs`.
        let parent = &me[..me.len().saturating_sub(1)];
        let mut deps = BTreeSet::new();
        for (prefix, base) in [("crate::", &[][..]), ("super::", parent)] {
            for p in paths(code, prefix) {
                let segs: Vec<&str> = p.iter().map(String::as_str).collect();
                if let Some(t) = resolve(&modules, base, &segs) {
                    if t != *name {
                        deps.insert(t);
                    }
                }
            }
        }
        g.insert(name.clone(), deps);
    }
    g
}

fn graph() -> Graph {
    graph_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

fn runner_graph() -> Graph {
    graph_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../cts-runner/src"))
}

/// The edges from modules under one of `from` to modules under `to`.
fn edges(g: &Graph, from: &[&str], to: &str) -> Vec<String> {
    g.iter()
        .filter(|(m, _)| from.iter().any(|f| m.starts_with(f)))
        .flat_map(|(m, deps)| deps.iter().filter(|d| d.starts_with(to)).map(move |d| format!("{m} -> {d}")))
        .collect()
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        for w in &s.g[v] {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                s.low.insert(v, s.low[v].min(s.low[w.as_str()]));
            } else if s.stack.contains(&w.as_str()) {
                s.low.insert(v, s.low[v].min(s.index[w.as_str()]));
            }
        }
        if s.low[v] == s.index[v] {
            let at = s.stack.iter().rposition(|&x| x == v).unwrap();
            let comp: Vec<String> = s.stack.drain(at..).map(String::from).collect();
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = State { g, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), out: Vec::new() };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn nothing_below_the_c_boundary_imports_it() {
    let g = graph();
    assert!(
        g.contains_key("core/kernel") && g["api/kernel"].contains("core/kernel"),
        "the graph reads the source: {g:#?}"
    );
    let leaks = edges(&g, &["core", "exec", "compiler"], "api");
    assert!(leaks.is_empty(), "{leaks:#?}");
}

#[test]
fn compiler_and_exec_take_their_configuration_from_core_as_arguments() {
    let g = graph();
    assert!(g["core/program"].contains("compiler"), "the graph reads the source: {g:#?}");
    let leaks = edges(&g, &["compiler", "exec"], "core");
    assert!(leaks.is_empty(), "{leaks:#?}");
}

#[test]
fn the_module_graph_has_no_cycles() {
    assert_eq!(cycles(&graph()), Vec::<Vec<String>>::new());
}

#[test]
fn the_runner_has_no_cycles() {
    let g = runner_graph();
    assert!(g.contains_key("main") && g.len() > 10, "the graph reads the runner's source: {g:#?}");
    assert_eq!(cycles(&g), Vec::<Vec<String>>::new());
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let mut g = Graph::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "d2"), ("e", "f"), ("f", "e")] {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    }
    let mut found = cycles(&g);
    found.iter_mut().for_each(|c| c.sort());
    found.sort();
    assert_eq!(found, vec![vec!["a", "b", "c"], vec!["e", "f"]]);
}
