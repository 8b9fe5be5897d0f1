//! Template languages whose unrendered files are not manifests yet: Helm (Go templates),
//! Handlebars and Terraform `templatefile`. A document that fails to parse only because of
//! a template's syntax is skipped with the language named and how to render it, instead of
//! being reported as a YAML error; a document that parses is linted whatever it holds, so
//! `${var}` or `{{` inside a valid string is just text.

/// A template language karplint recognises and does not lint unrendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Template {
    /// Go templates, `{{ … }}`, as Helm charts use them.
    Helm,
    /// Handlebars (or Mustache): `{{#if}}`, `{{/each}}`, `{{> partial}}`.
    Handlebars,
    /// Terraform's `templatefile`: `${ … }` interpolations, `%{ if }` and `%{ for }`.
    Terraform,
}

impl std::fmt::Display for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Template::Helm => {
                "unrendered Helm template: lint the rendered output with `helm template <release> <chart> | karplint -`"
            }
            Template::Handlebars => {
                "unrendered Handlebars template: render it with the tool that fills it in and lint the output (`… | karplint -`)"
            }
            Template::Terraform => {
                "unrendered Terraform template (templatefile): render it with terraform (a `local_file` resource or `terraform console`) and lint the output"
            }
        })
    }
}

impl Template {
    /// The language a file is written in whole, from its name: `*.tftpl` (Terraform's own
    /// extension for `templatefile` inputs), `*.hbs` and `*.handlebars`.
    pub fn of_file_name(name: &str) -> Option<Template> {
        let ext = name.rsplit_once('.')?.1;
        if ext.eq_ignore_ascii_case("tftpl") {
            Some(Template::Terraform)
        } else if ext.eq_ignore_ascii_case("hbs") || ext.eq_ignore_ascii_case("handlebars") {
            Some(Template::Handlebars)
        } else {
            None
        }
    }
}

/// The template language whose syntax alone breaks `text`, a document that failed to
/// parse: the one whose constructs, blanked out, leave a document `parses` accepts, or one
/// it rejects only on a line where a construct was blanked (a value a template fills in
/// blanks to null, which a typed field may refuse). `parses` takes the blanked text and
/// whether duplicate keys are allowed (the branches of a template's `if`/`else` write the
/// same key twice; a Terraform template without `%{ … }` directives has no branches), and
/// returns the offset of its error. `{{ … }}` is Handlebars when it holds a block, partial
/// or comment (`{{#`, `{{/name`, `{{>`, `{{^`, `{{!`), which Go templates never write, and
/// Helm otherwise. A Terraform template may also emit `{{ … }}` for a later stage: when both
/// must be blanked, the file is Terraform's.
pub fn breaking_language(
    text: &str,
    parses: impl Fn(&str, bool) -> Result<(), usize>,
) -> Option<Template> {
    let bytes = text.as_bytes();
    let braces = memchr::memmem::find(bytes, b"{{").map(|_| {
        if is_handlebars(bytes) {
            Template::Handlebars
        } else {
            Template::Helm
        }
    });
    let breaks_only = |blanked: &str, branches: bool| match parses(blanked, branches) {
        Ok(()) => true,
        Err(at) => on_blanked_line(text, blanked, at),
    };
    if let Some(language) = braces
        && breaks_only(&blank_braces(text), true)
    {
        return Some(language);
    }
    if has_terraform_syntax(bytes) {
        let blanked = blank_terraform(text);
        let branches = has_directive(bytes);
        if breaks_only(&blanked, branches)
            || braces.is_some() && breaks_only(&blank_braces(&blanked), true)
        {
            return Some(Template::Terraform);
        }
    }
    None
}

/// Is the line of `blanked` holding offset `at` one where a construct of `text` was blanked?
fn on_blanked_line(text: &str, blanked: &str, at: usize) -> bool {
    let (text, blanked) = (text.as_bytes(), blanked.as_bytes());
    if text.len() != blanked.len() {
        return false;
    }
    let at = at.min(text.len());
    let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |p| p + 1);
    let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |p| at + p);
    text[start..end] != blanked[start..end]
}

/// Does `{{ … }}` open a Handlebars block, partial, inverse or comment somewhere, or is it
/// a triple-stash `{{{ … }}}` (Handlebars' unescaped output, which a Go template cannot
/// write: an action never starts with `{`)?
fn is_handlebars(bytes: &[u8]) -> bool {
    memchr::memmem::find_iter(bytes, b"{{").any(|at| {
        let rest = &bytes[at + 2..];
        if rest.first() == Some(&b'{') {
            return true;
        }
        let rest = rest.strip_prefix(b"~").unwrap_or(rest).trim_ascii_start();
        match rest.first() {
            Some(b'#' | b'>' | b'^' | b'!') => true,
            // `{{/each}}` closes a block; `{{/* … */}}` is a Go comment.
            Some(b'/') => rest.get(1).is_some_and(u8::is_ascii_alphabetic),
            _ => false,
        }
    })
}

/// Does `bytes` hold a Terraform interpolation `${` or directive `%{` (not the escapes
/// `$${` and `%%{`)?
fn has_terraform_syntax(bytes: &[u8]) -> bool {
    memchr::memmem::find_iter(bytes, b"{").any(|at| starts_construct(bytes, at.wrapping_sub(1)))
}

/// Does `bytes` hold a Terraform directive `%{ … }` (not the escape `%%{`)?
fn has_directive(bytes: &[u8]) -> bool {
    memchr::memmem::find_iter(bytes, b"%{").any(|at| starts_construct(bytes, at))
}

/// Does a Terraform construct (`${` or `%{`, not escaped) start at `at`?
fn starts_construct(bytes: &[u8], at: usize) -> bool {
    matches!(bytes.get(at), Some(b'$' | b'%'))
        && bytes.get(at + 1) == Some(&b'{')
        && (at == 0 || bytes[at - 1] != bytes[at])
}

/// `text` with every `{{ … }}` action (braces included, and the third brace of a
/// Handlebars `{{{ … }}}`) turned into spaces, line breaks kept: what a template's YAML
/// reads like around its actions.
pub fn blank_braces(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let mut from = 0;
    while let Some(open) = memchr::memmem::find(&out[from..], b"{{").map(|p| from + p) {
        let close = match memchr::memmem::find(&out[open + 2..], b"}}") {
            Some(p) => {
                let end = open + 4 + p;
                let triple = out.get(open + 2) == Some(&b'{') && out.get(end) == Some(&b'}');
                end + usize::from(triple)
            }
            None => out.len(),
        };
        blank(&mut out, open..close);
        from = close;
    }
    // Only ASCII braces and the bytes between them (whole characters) became spaces.
    String::from_utf8(out).unwrap_or_default()
}

/// `text` with every Terraform interpolation `${ … }` and directive `%{ … }` turned into
/// spaces, line breaks kept. Braces nest and quoted strings inside are skipped; an unclosed
/// construct is blanked to the end of its line.
pub fn blank_terraform(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let mut at = 0;
    while at < out.len() {
        if starts_construct(&out, at) {
            let end = construct_end(&out, at + 2);
            blank(&mut out, at..end);
            at = end;
        } else {
            at += 1;
        }
    }
    // Only the bytes from an ASCII `$`/`%` to an ASCII `}` or line end became spaces.
    String::from_utf8(out).unwrap_or_default()
}

/// Where the construct whose body starts at `from` ends: after its closing brace, or at
/// the end of the line when it has none.
fn construct_end(bytes: &[u8], from: usize) -> usize {
    let (mut depth, mut quoted, mut at) = (1usize, false, from);
    while at < bytes.len() {
        match bytes[at] {
            b'\\' if quoted => at += 1,
            b'"' => quoted = !quoted,
            b'{' if !quoted => depth += 1,
            b'}' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |p| from + p)
}

/// Blanks `range` of `bytes` (line breaks kept): spaces, which read as a null value, or
/// `x`s where the construct is a mapping key (`${k}: v`) or starts one
/// (`{{{PREFIX}}}/instance-family: inf2`), which must stay a key at its indentation.
fn blank(bytes: &mut [u8], range: std::ops::Range<usize>) {
    let fill = if bytes.get(range.end) == Some(&b':') || starts_key(bytes, range.clone()) {
        b'x'
    } else {
        b' '
    };
    for b in &mut bytes[range] {
        if !matches!(*b, b'\n' | b'\r') {
            *b = fill;
        }
    }
}

/// Is the construct at `range` the start of a longer token that begins its line's content
/// (only indentation, or a list item's `- `, before it; something other than a space right
/// after it)? Blanked to spaces, the rest of the token would move right and out of its
/// mapping.
fn starts_key(bytes: &[u8], range: std::ops::Range<usize>) -> bool {
    let line_start = memchr::memrchr(b'\n', &bytes[..range.start]).map_or(0, |p| p + 1);
    let before = bytes[line_start..range.start].trim_ascii();
    let after = bytes.get(range.end);
    (before.is_empty() || before == b"-")
        && after
            .is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b'#' | b',' | b'}' | b']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terraform_constructs_are_blanked_and_escapes_kept() {
        let text = "a: ${x}\n%{ if y ~}\nb: [${jsonencode({k = \"}\"})}]\n%{ endif }\nc: $${lit} %%{lit}\n";
        let blanked = blank_terraform(text);
        assert_eq!(blanked.len(), text.len());
        assert_eq!(blanked.lines().count(), text.lines().count());
        assert!(
            !blanked.contains("${x}") && !blanked.contains("if y"),
            "{blanked}"
        );
        assert!(
            blanked.contains("b: [") && blanked.contains(']'),
            "{blanked}"
        );
        assert!(blanked.contains("$${lit} %%{lit}"), "{blanked}");
    }

    #[test]
    fn an_unclosed_construct_is_blanked_to_its_line_end() {
        assert_eq!(blank_terraform("a: ${x\nb: 1\n"), "a:    \nb: 1\n");
    }

    #[test]
    fn a_construct_in_key_position_stays_a_key() {
        assert_eq!(blank_terraform("${k}: \"${v}\""), "xxxx: \"    \"");
        assert_eq!(blank_braces("{{ $k }}: {{ $v }}"), "xxxxxxxx:         ");
    }

    #[test]
    fn handlebars_is_told_from_go_templates() {
        assert!(is_handlebars(b"{{#if a}}x{{/if}}"));
        assert!(is_handlebars(b"{{~#each a}}"));
        assert!(is_handlebars(b"{{> partial}}"));
        assert!(!is_handlebars(b"{{- if .Values.a }}{{/* c */}}{{ end }}"));
        assert_eq!(blank_braces("a: {{{x}}}!"), "a:        !");
    }

    /// The languages `parse_source` skips the documents of `yaml` as, and its problems.
    fn skipped_as(yaml: &str) -> (Vec<Template>, usize) {
        let parsed = crate::parse::parse_source(0, yaml, false, false);
        let languages = parsed.templates.iter().map(|t| t.2).collect();
        (languages, parsed.problems.len())
    }

    /// Handlebars' triple-stash `{{{ … }}}` (unescaped output) as a key prefix, as a value,
    /// and block helpers on their own lines: a Handlebars template, never a parse error and
    /// never Helm's (a Go template action cannot start with `{`).
    #[test]
    fn handlebars_triple_stash_and_block_helpers_are_handlebars() {
        let nodepool = "\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {{{NAME}}}
spec:
  template:
    spec:
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: [amd64]
{{#if NEURON}}
        - key: {{{PREFIX}}}/instance-family
          operator: In
          values: [inf2]
{{/if}}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
";
        let pod = "\
apiVersion: v1
kind: Pod
metadata:
  name: neuron
spec:
  nodeSelector:
    kubernetes.io/arch: amd64
    {{{PREFIX}}}/instance-family: inf2
  containers:
    - name: app
      image: {{{IMAGE}}}
";
        for yaml in [nodepool, pod] {
            assert_eq!(skipped_as(yaml), (vec![Template::Handlebars], 0), "{yaml}");
        }
        assert!(is_handlebars(b"image: {{{IMAGE}}}"));
    }

    #[test]
    fn a_construct_starting_a_key_stays_that_key() {
        assert_eq!(
            blank_braces("  a: 1\n  {{{P}}}/b: 2\n"),
            "  a: 1\n  xxxxxxx/b: 2\n"
        );
        assert_eq!(blank_braces("- {{x}}-y: 1"), "- xxxxx-y: 1");
        // A value a template fills in, or one beside other text, stays blank.
        assert_eq!(blank_braces("a: {{x}}-y"), "a:      -y");
    }

    #[test]
    fn file_names_name_their_language() {
        assert_eq!(
            Template::of_file_name("nodepool.yaml.tftpl"),
            Some(Template::Terraform)
        );
        assert_eq!(Template::of_file_name("d.hbs"), Some(Template::Handlebars));
        assert_eq!(Template::of_file_name("d.yaml.tpl"), None);
        assert_eq!(Template::of_file_name("tftpl"), None);
    }
}
