//! The shape of the code that clippy cannot check: no loop of imports between the top-level
//! modules of `src/`, and every rule with its own file, doc, fixtures and snapshot (and nothing
//! of those without a rule). `scripts/new-rule.sh`, which scaffolds those files, is tested here
//! too. (Function length, `unwrap`/`expect`/`panic` and `unsafe` are clippy's and rustc's:
//! `[lints]` in Cargo.toml.)
//!
//! The sources are read with `syn`, so a `crate::x` in a comment or a string counts for
//! nothing, and items under `#[cfg(test)]` or `#[test]` are left out.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Files of `src/` that are not nodes of the import graph. `lib.rs` is the crate root: it only
/// declares the modules. `main.rs` is the binary, another crate, which reaches the library as
/// `karplint::`, never `crate::`.
const NOT_NODES: &[&str] = &["lib.rs", "main.rs"];

// ---------------------------------------------------------------------------------------
// Reading the sources
// ---------------------------------------------------------------------------------------

struct Source {
    /// Relative to the repository root, with `/`.
    path: String,
    file: syn::File,
}

impl Source {
    /// The top-level module this file belongs to (`src/karpenter/pool.rs` → `karpenter`),
    /// or `None` for the files in [`NOT_NODES`].
    fn node(&self) -> Option<String> {
        let rel = self.path.strip_prefix("src/")?;
        if NOT_NODES.contains(&rel) {
            return None;
        }
        let first = rel.split('/').next()?;
        Some(first.trim_end_matches(".rs").to_string())
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `.rs` file under `src/` outside tests, parsed: a file that a `#[cfg(test)] mod x;`
/// declares is left out.
fn sources() -> Vec<Source> {
    let mut paths = Vec::new();
    rust_files(Path::new("src"), &mut paths);
    let sources: Vec<Source> = paths
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let path = p.to_string_lossy().replace('\\', "/");
            Source { path, file }
        })
        .collect();
    let test_files: BTreeSet<String> = sources
        .iter()
        .flat_map(|s| {
            let dir = module_dir(&s.path);
            test_modules(&s.file)
                .into_iter()
                .flat_map(move |m| [format!("{dir}/{m}.rs"), format!("{dir}/{m}/mod.rs")])
        })
        .collect();
    sources
        .into_iter()
        .filter(|s| !test_files.contains(&s.path))
        .collect()
}

/// The directory holding the files of the child modules of the module in `path`.
fn module_dir(path: &str) -> String {
    let stem = path.trim_end_matches(".rs");
    match stem.rsplit_once('/') {
        Some((dir, "mod" | "lib" | "main")) => dir.to_string(),
        _ => stem.to_string(),
    }
}

/// Whether the attributes put an item in the tests: `#[test]` or `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg")
                && a.meta
                    .require_list()
                    .is_ok_and(|l| l.tokens.to_string() == "test"))
    })
}

/// The names of the out-of-line modules the file declares `#[cfg(test)] mod name;`.
fn test_modules(file: &syn::File) -> Vec<String> {
    let mut names = Vec::new();
    for item in &file.items {
        if let syn::Item::Mod(m) = item
            && m.content.is_none()
            && is_test(&m.attrs)
        {
            names.push(m.ident.to_string());
        }
    }
    names
}

/// Where the code outside tests names `crate::X`, as (X, line): in paths, `use` trees
/// (every branch of a group) and the tokens of macros (`crate::X` and `$crate::X`).
#[derive(Default)]
struct CrateRefs(Vec<(String, usize)>);

impl CrateRefs {
    fn of_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, t) in tokens.iter().enumerate() {
            match t {
                TokenTree::Group(g) => self.of_tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" => {
                    if let [
                        TokenTree::Punct(a),
                        TokenTree::Punct(b),
                        TokenTree::Ident(to),
                        ..,
                    ] = &tokens[i + 1..]
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        self.0.push((to.to_string(), id.span().start().line));
                    }
                }
                _ => {}
            }
        }
    }

    fn of_use_tree(&mut self, tree: &syn::UseTree, line: usize) {
        match tree {
            syn::UseTree::Path(p) => self.0.push((p.ident.to_string(), line)),
            syn::UseTree::Name(n) => self.0.push((n.ident.to_string(), line)),
            syn::UseTree::Rename(r) => self.0.push((r.ident.to_string(), line)),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.of_use_tree(t, line)),
            syn::UseTree::Glob(_) => {}
        }
    }
}

impl<'ast> Visit<'ast> for CrateRefs {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let mut segments = path.segments.iter();
        if let (Some(first), Some(to)) = (segments.next(), segments.next())
            && first.ident == "crate"
        {
            let line = first.ident.span().start().line;
            self.0.push((to.ident.to_string(), line));
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if let syn::UseTree::Path(p) = &u.tree
            && p.ident == "crate"
        {
            self.of_use_tree(&p.tree, p.ident.span().start().line);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.of_tokens(m.tokens.clone());
    }
}

/// The top-level modules `code` names as `crate::X`, in order, for the tests of this file.
fn crate_targets(code: &str) -> Vec<String> {
    let file = syn::parse_file(code).expect("parse");
    let mut refs = CrateRefs::default();
    refs.visit_file(&file);
    refs.0.into_iter().map(|(to, _)| to).collect()
}

// ---------------------------------------------------------------------------------------
// a. No loop of imports between top-level modules
// ---------------------------------------------------------------------------------------

/// An edge of the module graph: `from` names `crate::to` at these places.
type Edges = BTreeMap<(String, String), Vec<String>>;

fn import_edges(sources: &[Source]) -> Edges {
    let mut edges = Edges::new();
    for s in sources {
        let Some(from) = s.node() else { continue };
        let mut refs = CrateRefs::default();
        refs.visit_file(&s.file);
        for (to, line) in refs.0 {
            if to == "self" || to == from {
                continue;
            }
            let place = format!("{}:{line}", s.path);
            let places = edges.entry((from.clone(), to)).or_default();
            if !places.contains(&place) {
                places.push(place);
            }
        }
    }
    edges
}

/// The shortest path from `from` to `to` over `edges`, both ends included.
fn shortest_path(edges: &Edges, from: &str, to: &str) -> Option<Vec<String>> {
    let mut prev: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([from.to_string()]);
    let mut seen = BTreeSet::from([from.to_string()]);
    while let Some(n) = queue.pop_front() {
        if n == to {
            let mut path = vec![n];
            while let Some(p) = prev.get(path.last()?) {
                path.push(p.clone());
            }
            path.reverse();
            return Some(path);
        }
        for (a, b) in edges.keys() {
            if *a == n && seen.insert(b.clone()) {
                prev.insert(b.clone(), n.clone());
                queue.push_back(b.clone());
            }
        }
    }
    None
}

/// One cycle for every edge that lies on some cycle (the shortest through it), each
/// rotated to start at its smallest module, without repeats: every edge to cut is named.
fn cycles(edges: &Edges) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for (a, b) in edges.keys() {
        let Some(back) = shortest_path(edges, b, a) else {
            continue;
        };
        let mut cycle = vec![a.clone()];
        cycle.extend(back.into_iter().take_while(|n| n != a));
        let start = (0..cycle.len()).min_by_key(|&i| &cycle[i]).unwrap_or(0);
        cycle.rotate_left(start);
        found.insert(cycle);
    }
    found
}

#[test]
fn no_import_loop_between_top_level_modules() {
    let edges = import_edges(&sources());
    assert!(
        edges.contains_key(&("engine".to_string(), "rules".to_string())),
        "the graph misses engine -> rules: {:?}",
        edges.keys().collect::<Vec<_>>()
    );
    let mut report = String::new();
    for cycle in cycles(&edges) {
        let mut ring = cycle.clone();
        ring.push(cycle[0].clone());
        report.push_str(&format!("cycle: {}\n", ring.join(" -> ")));
        for pair in ring.windows(2) {
            let places = &edges[&(pair[0].clone(), pair[1].clone())];
            report.push_str(&format!("  {} -> {}:\n", pair[0], pair[1]));
            for p in places {
                report.push_str(&format!("    {p}\n"));
            }
        }
    }
    assert!(
        report.is_empty(),
        "imports between top-level modules of src/ form loops; cut one edge of each:\n{report}"
    );
}

// ---------------------------------------------------------------------------------------
// c. Every rule has its files, and every such file has a rule
// ---------------------------------------------------------------------------------------

/// The ids `declare_rule!` declares in `src/rules/**` (the first string literal of each
/// invocation), with the file of each.
fn declared_rules(sources: &[Source]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in sources.iter().filter(|s| s.path.starts_with("src/rules/")) {
        for item in &s.file.items {
            let syn::Item::Macro(m) = item else { continue };
            if !m.mac.path.is_ident("declare_rule") {
                continue;
            }
            let id = m.mac.tokens.clone().into_iter().find_map(|t| match t {
                TokenTree::Literal(l) => match syn::Lit::new(l) {
                    syn::Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            });
            out.push((id.unwrap_or_default(), s.path.clone()));
        }
    }
    out
}

fn names_in(dir: &str, dirs: bool) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {dir}: {e}"))
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir() == dirs)
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect()
}

/// What `tests/rules.rs` lints as firing (`fire*`) and quiet (`quiet*`) in a fixture folder.
fn fixture_files(id: &str, prefix: &str) -> usize {
    names_in(&format!("fixtures/{id}"), false)
        .iter()
        .filter(|n| n.starts_with(prefix))
        .count()
}

#[test]
fn every_rule_has_its_file_doc_fixtures_and_snapshot() {
    let registered: Vec<&str> = karplint::rules::registry()
        .iter()
        .map(|r| r.meta().id)
        .collect();
    let builtin: Vec<&str> = karplint::rules::BUILTIN_RULES.iter().map(|r| r.0).collect();
    let declared = declared_rules(&sources());
    let snapshots = names_in("tests/snapshots", false);
    let mut problems = Vec::new();

    for &id in registered.iter().chain(&builtin) {
        if registered.contains(&id) {
            let files: Vec<_> = declared.iter().filter(|d| d.0 == id).collect();
            let stem = id.replace('-', "_");
            let good = |p: &str| {
                p.rsplit('/').next() == Some(&format!("{stem}.rs"))
                    || p.ends_with(&format!("/{stem}/mod.rs"))
            };
            match files.as_slice() {
                [(_, path)] if good(path) => {}
                [(_, path)] => problems.push(format!(
                    "{id}: declared in {path}, not in src/rules/**/{stem}.rs"
                )),
                [] => problems.push(format!(
                    "{id}: no declare_rule! with this id in src/rules/**/{stem}.rs"
                )),
                many => problems.push(format!("{id}: declared more than once: {many:?}")),
            }
        }
        if !Path::new(&format!("lints/{id}.md")).is_file() {
            problems.push(format!("{id}: lints/{id}.md is missing"));
        }
        if !Path::new(&format!("fixtures/{id}")).is_dir() {
            problems.push(format!("{id}: fixtures/{id}/ is missing"));
        } else {
            for prefix in ["fire", "quiet"] {
                if fixture_files(id, prefix) == 0 {
                    problems.push(format!("{id}: fixtures/{id}/ has no {prefix}* file"));
                }
            }
        }
        let snap = format!("rules__fixtures__{id}.snap");
        if !snapshots.contains(&snap) {
            problems.push(format!("{id}: tests/snapshots/{snap} is missing"));
        }
    }

    let known: BTreeSet<&str> = registered.iter().chain(&builtin).copied().collect();
    for (id, path) in &declared {
        if !known.contains(id.as_str()) {
            problems.push(format!("{id}: declared in {path} but not in registry()"));
        }
    }
    for doc in names_in("lints", false) {
        let id = doc.trim_end_matches(".md");
        if !known.contains(id) {
            problems.push(format!("lints/{doc}: no rule {id}"));
        }
    }
    for dir in names_in("fixtures", true) {
        if dir != "showcase" && !known.contains(dir.as_str()) {
            problems.push(format!("fixtures/{dir}/: no rule {dir}"));
        }
    }
    for snap in &snapshots {
        if let Some(id) = snap
            .strip_prefix("rules__fixtures__")
            .and_then(|s| s.strip_suffix(".snap"))
            && !known.contains(id)
        {
            problems.push(format!("tests/snapshots/{snap}: no rule {id}"));
        }
    }
    assert!(
        problems.is_empty(),
        "rules and their files disagree:\n  {}",
        problems.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------
// The checks' own reading of Rust
// ---------------------------------------------------------------------------------------

#[test]
fn crate_paths_count_outside_comments_strings_and_tests() {
    let code = r##"
        /// [`crate::a`]
        use crate::c; /* crate::d */
        fn f() { let s = "crate::e"; let r = r#"crate::f"#; crate::g::h(); }
        #[cfg(test)]
        mod tests { use crate::t; }
        #[test]
        fn t() { crate::u::v(); }
    "##;
    assert_eq!(crate_targets(code), ["c", "g"]);
}

#[test]
fn groups_and_macros_name_every_module() {
    let code = "use crate::{a::X, b, c::{d, e}, self};\n\
                macro_rules! m { () => { $crate::rules::META } }\n\
                fn f() { format!(\"{}\", crate::report::X); }";
    assert_eq!(
        crate_targets(code),
        ["a", "b", "c", "self", "rules", "report"]
    );
}

#[test]
fn cycles_name_each_loop_once() {
    let mut edges = Edges::new();
    for (a, b) in [
        ("report", "suppress"),
        ("suppress", "report"),
        ("a", "b"),
        ("b", "c"),
    ] {
        edges.insert((a.into(), b.into()), vec![format!("src/{a}.rs:1")]);
    }
    let found: Vec<String> = cycles(&edges).into_iter().map(|c| c.join(" -> ")).collect();
    assert_eq!(found, ["report -> suppress"]);
}

// ---------------------------------------------------------------------------------------
// scripts/new-rule.sh
// ---------------------------------------------------------------------------------------

/// A copy of what the scaffold edits: `src/rules/mod.rs`, `lints/` and `fixtures/`.
fn scaffold_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("tempdir");
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(from, to).expect("copy");
    };
    copy(
        Path::new("src/rules/mod.rs"),
        &root.path().join("src/rules/mod.rs"),
    );
    for dir in ["lints", "fixtures/untolerated-taint"] {
        for name in names_in(dir, false) {
            copy(
                &Path::new(dir).join(&name),
                &root.path().join(dir).join(&name),
            );
        }
    }
    root
}

fn new_rule(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("bash")
        .arg("scripts/new-rule.sh")
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .expect("bash runs")
}

#[test]
fn new_rule_scaffolds_every_file_and_registers_the_rule_in_id_order() {
    let root = scaffold_root();
    let out = new_rule(
        root.path(),
        &["pod-too-large", "warning", "a pod that \"no\" node holds"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &str| std::fs::read_to_string(root.path().join(p)).expect(p);

    let rule = read("src/rules/pod_too_large.rs");
    assert!(rule.starts_with("//! `pod-too-large`"), "{rule}");
    // As written, or as rustfmt lays it out when it is on PATH.
    let start = rule.find("declare_rule!(").expect("declare_rule!");
    let end = start + rule[start..].find(");").expect("closed") + 2;
    let call: String = rule[start..end].split_whitespace().collect();
    assert_eq!(
        call,
        r#"declare_rule!(PodTooLarge,"pod-too-large",Warning,"apodthat\"no\"nodeholds");"#
    );
    assert!(rule.contains("impl Rule for PodTooLarge {"), "{rule}");
    assert!(
        rule.contains("// fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings)")
    );

    let doc = read("lints/pod-too-large.md");
    assert!(doc.starts_with("# pod-too-large\n"));
    for section in [
        "## What it checks",
        "## Why it matters",
        "## Example",
        "## Fix",
    ] {
        assert!(doc.contains(section), "{doc}");
    }
    assert!(doc.contains("TODO"));
    assert!(read("fixtures/pod-too-large/fire.yaml").contains("TODO"));
    assert!(read("fixtures/pod-too-large/quiet.yaml").contains("TODO"));

    // One line in the `rules!` list, between its neighbours in id order.
    let module = read("src/rules/mod.rs");
    let original = std::fs::read_to_string("src/rules/mod.rs").expect("mod.rs");
    assert_eq!(module.lines().count(), original.lines().count() + 1);
    let list = &module[module.find("\nrules! {\n").expect("the rules! list")..];
    let list = &list[..list.find("\n}\n").expect("the list's end")];
    let entries: Vec<&str> = list.lines().skip(2).map(str::trim).collect();
    assert!(
        entries.contains(&"mod pod_too_large::PodTooLarge,"),
        "{list}"
    );
    // Each entry's rule id, from its struct name: `scheduling::NoInstanceTypeFits,`.
    let kebab = |camel: &str| {
        let mut id = String::new();
        for (i, c) in camel.chars().enumerate() {
            if c.is_ascii_uppercase() {
                if i > 0 {
                    id.push('-');
                }
                id.push(c.to_ascii_lowercase());
            } else {
                id.push(c);
            }
        }
        id
    };
    let ids: Vec<String> = entries
        .iter()
        .map(|l| kebab(l[l.rfind("::").expect("::") + 2..].trim_end_matches(',')))
        .collect();
    assert_eq!(ids.len(), karplint::rules::registry().len() + 1);
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);

    // Once it exists, the same id is refused and nothing changes.
    let again = new_rule(root.path(), &["pod-too-large", "warning", "again"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert_eq!(read("src/rules/mod.rs"), module);
}

#[test]
fn new_rule_refuses_bad_arguments_and_touches_nothing() {
    let root = scaffold_root();
    let before = std::fs::read_to_string(root.path().join("src/rules/mod.rs")).expect("mod.rs");
    for (args, says) in [
        (&["Bad_Id", "error", "x"][..], "kebab-case"),
        (&["-leading", "error", "x"], "kebab-case"),
        (&["trailing-", "error", "x"], "kebab-case"),
        (&["good-id", "fatal", "x"], "severity"),
        (&["good-id", "error", ""], "summary"),
        (&["good-id", "error"], "usage"),
        (&["untolerated-taint", "error", "x"], "already exists"),
        (&["parse-error", "error", "x"], "already exists"),
        (&["showcase", "error", "x"], "already exists"),
    ] {
        let out = new_rule(root.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should say {says}: {err}");
    }
    let after = std::fs::read_to_string(root.path().join("src/rules/mod.rs")).expect("mod.rs");
    assert_eq!(before, after);
    assert!(!root.path().join("lints/good-id.md").exists());
    assert!(!root.path().join("fixtures/good-id").exists());
}
