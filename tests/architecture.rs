//! The shape of the code, checked from its text: no loop of imports between the top-level
//! modules of `src/`, no function outside tests longer than [`MAX_FN_LINES`] lines, and every
//! rule with its own file, doc, fixtures and snapshot (and nothing of those without a rule).
//! `scripts/new-rule.sh`, which scaffolds those files, is tested here too.
//!
//! The sources are read with a small lexer ([`mask`]) that blanks comments and the insides of
//! literals, so a `crate::x` or a brace in a doc comment or a string counts for nothing.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// The longest a function outside tests may be, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 120;

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
    text: String,
    /// `text` with comments and the contents of string and char literals blanked (newlines
    /// kept), so byte offsets and line numbers are those of `text`.
    code: Vec<u8>,
    /// Byte ranges of `#[cfg(test)]` and `#[test]` items; the whole file when a
    /// `#[cfg(test)] mod x;` elsewhere declares it.
    tests: Vec<(usize, usize)>,
}

impl Source {
    fn line(&self, offset: usize) -> usize {
        1 + self.code[..offset].iter().filter(|&&b| b == b'\n').count()
    }

    fn in_tests(&self, offset: usize) -> bool {
        self.tests.iter().any(|&(a, b)| a <= offset && offset <= b)
    }

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

/// Every `.rs` file under `src/`, masked, with its test ranges.
fn sources() -> Vec<Source> {
    let mut paths = Vec::new();
    rust_files(Path::new("src"), &mut paths);
    let mut sources: Vec<Source> = paths
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let code = mask(&text);
            Source {
                path: p.to_string_lossy().replace('\\', "/"),
                text,
                code,
                tests: Vec::new(),
            }
        })
        .collect();
    // Test ranges, and the files that `#[cfg(test)] mod x;` makes test-only.
    let mut test_files = BTreeSet::new();
    for s in &mut sources {
        let (ranges, out_of_line) = test_items(&s.code);
        s.tests = ranges;
        let dir = module_dir(&s.path);
        for m in out_of_line {
            test_files.insert(format!("{dir}/{m}.rs"));
            test_files.insert(format!("{dir}/{m}/mod.rs"));
        }
    }
    for s in &mut sources {
        if test_files.contains(&s.path) {
            s.tests = vec![(0, s.code.len())];
        }
    }
    sources
}

/// The directory holding the files of the child modules of the module in `path`.
fn module_dir(path: &str) -> String {
    let stem = path.trim_end_matches(".rs");
    match stem.rsplit_once('/') {
        Some((dir, "mod" | "lib" | "main")) => dir.to_string(),
        _ => stem.to_string(),
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `src` with comments (line, block, nested, doc) and the contents of string, raw string,
/// byte string and char literals replaced by spaces; newlines are kept everywhere.
fn mask(src: &str) -> Vec<u8> {
    let s = src.as_bytes();
    let mut out = s.to_vec();
    let blank = |out: &mut Vec<u8>, a: usize, b: usize| {
        for c in &mut out[a..b.min(s.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let prev_ident = i > 0 && is_ident(s[i - 1]);
        match s[i] {
            b'/' if s.get(i + 1) == Some(&b'/') => {
                let end = s[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(s.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < s.len() && depth > 0 {
                    if s[j] == b'/' && s.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if s[j] == b'*' && s.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'"' => {
                let end = string_end(s, i + 1);
                blank(&mut out, i + 1, end - 1);
                i = end;
            }
            b'r' | b'b' | b'c' if !prev_ident => {
                // b"..", c"..", b'x', r"..", r#".."#, br#".."#, cr".."; else an identifier.
                let mut j = i + 1;
                if s[i] != b'r' && s.get(j) == Some(&b'r') {
                    j += 1;
                }
                let raw = s[i] == b'r' || s[j - 1] == b'r';
                let hashes = s[j..].iter().take_while(|&&c| c == b'#').count();
                if raw && s.get(j + hashes) == Some(&b'"') {
                    let close: Vec<u8> = std::iter::once(b'"')
                        .chain(std::iter::repeat_n(b'#', hashes))
                        .collect();
                    let body = j + hashes + 1;
                    let end = s[body..]
                        .windows(close.len())
                        .position(|w| w == close.as_slice())
                        .map_or(s.len(), |p| body + p + close.len());
                    blank(&mut out, body, end - close.len());
                    i = end;
                } else if !raw && j == i + 1 && s.get(j) == Some(&b'"') {
                    let end = string_end(s, j + 1);
                    blank(&mut out, j + 1, end - 1);
                    i = end;
                } else if s[i] == b'b' && s.get(i + 1) == Some(&b'\'') {
                    let end = char_end(s, i + 1).unwrap_or(i + 2);
                    blank(&mut out, i + 2, end - 1);
                    i = end;
                } else {
                    while i < s.len() && is_ident(s[i]) {
                        i += 1;
                    }
                }
            }
            b'\'' => match char_end(s, i) {
                Some(end) => {
                    blank(&mut out, i + 1, end - 1);
                    i = end;
                }
                None => i += 1, // a lifetime or a label
            },
            c if is_ident(c) => {
                while i < s.len() && is_ident(s[i]) {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// The offset just past the closing quote of a string whose contents start at `i`.
fn string_end(s: &[u8], mut i: usize) -> usize {
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// The offset just past a char literal opening at `i` (`'x'`, `'\n'`, `'\u{1F600}'`, `'é'`),
/// or `None` when the quote starts a lifetime or label (`'a`, `'static`).
fn char_end(s: &[u8], i: usize) -> Option<usize> {
    if s.get(i + 1) == Some(&b'\\') {
        let close = s[i + 2..].iter().position(|&c| c == b'\'')?;
        return Some(i + 2 + close + 1);
    }
    // One character, of 1 to 4 UTF-8 bytes, then the closing quote.
    let first = *s.get(i + 1)?;
    let width = match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    (s.get(i + 1 + width) == Some(&b'\'')).then_some(i + 2 + width)
}

/// The offset of the brace that closes the one at `open`.
fn matching_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &c) in code.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The first `{` or `;` from `from` outside parentheses and brackets: where an item's body
/// starts, or that it has none.
fn body_or_semicolon(code: &[u8], from: usize) -> Option<(usize, u8)> {
    let mut depth = 0i32;
    for (j, &c) in code.iter().enumerate().skip(from) {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'{' | b';' if depth <= 0 => return Some((j, c)),
            _ => {}
        }
    }
    None
}

/// Every occurrence of `word` in `code` as a whole identifier.
fn words<'a>(code: &'a [u8], word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let w = word.as_bytes();
    (0..code.len().saturating_sub(w.len() - 1)).filter(move |&i| {
        code[i..].starts_with(w)
            && (i == 0 || !is_ident(code[i - 1]))
            && code.get(i + w.len()).is_none_or(|&c| !is_ident(c))
    })
}

/// The byte ranges of the items under `#[cfg(test)]` or `#[test]`, and the names of the
/// out-of-line modules declared `#[cfg(test)] mod name;`.
fn test_items(code: &[u8]) -> (Vec<(usize, usize)>, Vec<String>) {
    let text = String::from_utf8_lossy(code);
    let mut ranges = Vec::new();
    let mut files = Vec::new();
    for attr in ["#[cfg(test)]", "#[test]"] {
        for (at, _) in text.match_indices(attr) {
            let Some((pos, c)) = body_or_semicolon(code, at + attr.len()) else {
                continue;
            };
            if c == b'{' {
                ranges.push((at, matching_brace(code, pos)));
            } else {
                let item = String::from_utf8_lossy(&code[at + attr.len()..pos]).to_string();
                let mut it = item.split_whitespace();
                while let Some(w) = it.next() {
                    if w == "mod" {
                        files.extend(it.next().map(str::to_string));
                        break;
                    }
                }
            }
        }
    }
    (ranges, files)
}

// ---------------------------------------------------------------------------------------
// a. No loop of imports between top-level modules
// ---------------------------------------------------------------------------------------

/// An edge of the module graph: `from` names `crate::to` at these places.
type Edges = BTreeMap<(String, String), Vec<String>>;

/// The top-level modules that `crate::` (or `$crate::`) at `at` names: one for a path,
/// several for a group `crate::{a::X, b}`.
fn crate_targets(code: &[u8], at: usize) -> Vec<String> {
    let ident_at = |mut i: usize| {
        while code.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let start = i;
        while code.get(i).is_some_and(|&c| is_ident(c)) {
            i += 1;
        }
        (String::from_utf8_lossy(&code[start..i]).to_string(), i)
    };
    let mut i = at + "crate::".len();
    while code.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    if code.get(i) != Some(&b'{') {
        let (name, _) = ident_at(i);
        return vec![name];
    }
    // A group: the first identifier after `{` and after each comma at depth 1.
    let mut names = Vec::new();
    let mut depth = 0;
    let mut j = i;
    while j < code.len() {
        match code[j] {
            b'{' => {
                depth += 1;
                if depth == 1 {
                    names.push(ident_at(j + 1).0);
                }
            }
            b',' if depth == 1 => names.push(ident_at(j + 1).0),
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        j += 1;
    }
    names
}

fn import_edges(sources: &[Source]) -> Edges {
    let mut edges = Edges::new();
    for s in sources {
        let Some(from) = s.node() else { continue };
        for at in words(&s.code, "crate") {
            if !s.code[at..].starts_with(b"crate::") || s.in_tests(at) {
                continue;
            }
            for to in crate_targets(&s.code, at) {
                if to.is_empty() || to == "self" || to == from {
                    continue;
                }
                let place = format!("{}:{}", s.path, s.line(at));
                let places = edges.entry((from.clone(), to)).or_default();
                if !places.contains(&place) {
                    places.push(place);
                }
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
// b. No long functions
// ---------------------------------------------------------------------------------------

/// Every function with a body outside tests: (name, path, line, length in lines).
fn functions(sources: &[Source]) -> Vec<(String, String, usize, usize)> {
    let mut out = Vec::new();
    for s in sources {
        for at in words(&s.code, "fn") {
            if s.in_tests(at) {
                continue;
            }
            let mut i = at + 2;
            while s.code.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            if s.code[i..].starts_with(b"r#") {
                i += 2;
            }
            let start = i;
            while s.code.get(i).is_some_and(|&c| is_ident(c)) {
                i += 1;
            }
            if i == start {
                continue; // `fn(..) -> T`, a function pointer type
            }
            let name = s.text[start..i].to_string();
            let Some((open, b'{')) = body_or_semicolon(&s.code, i) else {
                continue; // a declaration without a body
            };
            let close = matching_brace(&s.code, open);
            let (first, last) = (s.line(at), s.line(close));
            out.push((name, s.path.clone(), first, last - first + 1));
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let mut long: Vec<_> = functions(&sources())
        .into_iter()
        .filter(|f| f.3 > MAX_FN_LINES)
        .collect();
    long.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| (&a.1, a.2).cmp(&(&b.1, b.2))));
    let report: String = long
        .iter()
        .map(|(name, path, line, len)| format!("  {name} at {path}:{line}: {len} lines\n"))
        .collect();
    assert!(
        report.is_empty(),
        "functions longer than {MAX_FN_LINES} lines (split them into named steps):\n{report}"
    );
}

// ---------------------------------------------------------------------------------------
// c. Every rule has its files, and every such file has a rule
// ---------------------------------------------------------------------------------------

/// The ids `declare_rule!` declares in `src/rules/**`, with the file of each.
fn declared_rules(sources: &[Source]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in sources.iter().filter(|s| s.path.starts_with("src/rules/")) {
        for at in words(&s.code, "declare_rule") {
            let rest = &s.code[at + "declare_rule".len()..];
            let trimmed = rest.iter().position(|c| !c.is_ascii_whitespace());
            if trimmed.and_then(|p| rest.get(p..p + 2)) != Some(b"!(") {
                continue;
            }
            if s.path == "src/rules/mod.rs" {
                continue; // the macro's definition and its doc
            }
            // The id is the first string literal of the invocation.
            let from = at + s.text[at..].find('"').unwrap_or(0) + 1;
            let to = from + s.text[from..].find('"').unwrap_or(0);
            out.push((s.text[from..to].to_string(), s.path.clone()));
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
fn mask_blanks_comments_and_literals_but_not_code() {
    let src = "/// [`crate::a`]\n//! crate::b\nuse crate::c; /* crate::d /* nested */ */\n\
               let s = \"crate::e {\"; let r = r#\"crate::f \"}\"#; let c = '{'; let l: &'a str;\n\
               let b = b'}'; fn x() {}\n";
    let code = String::from_utf8(mask(src)).expect("ascii");
    assert_eq!(code.matches("crate::").count(), 1, "{code}");
    assert!(code.contains("use crate::c;"));
    assert!(code.contains("&'a str"));
    assert_eq!(code.matches('{').count(), 1, "{code}");
    assert_eq!(code.len(), src.len());
    assert_eq!(code.lines().count(), src.lines().count());
}

#[test]
fn groups_name_every_module() {
    let code = mask("use crate::{a::X, b, c::{d, e}, self};");
    let at = words(&code, "crate").next().expect("crate");
    assert_eq!(crate_targets(&code, at), ["a", "b", "c", "self"]);
    let code = mask("let x = $crate::rules::META;");
    let at = words(&code, "crate").next().expect("crate");
    assert_eq!(crate_targets(&code, at), ["rules"]);
}

#[test]
fn functions_are_measured_from_fn_to_closing_brace_outside_tests() {
    let src = "fn a() {\n    let s = \"}\";\n}\n\
               trait T { fn decl(&self); }\n\
               #[cfg(test)]\nmod tests {\n    fn t() {\n    }\n}\n\
               fn b<F: Fn() -> u8>(f: fn(u8) -> u8) -> u8 { 1 }\n";
    let s = Source {
        path: "src/x.rs".into(),
        text: src.into(),
        code: mask(src),
        tests: test_items(&mask(src)).0,
    };
    let fns: Vec<_> = functions(std::slice::from_ref(&s))
        .into_iter()
        .map(|f| (f.0, f.2, f.3))
        .collect();
    assert_eq!(fns, [("a".into(), 1, 3), ("b".to_string(), 10, 1)]);
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
