//! The run's sources: the discovered inputs turned into [`Source`]s (standard input read
//! once), and each source's bytes read and parsed, in whole or in part.

use super::ReadError;
use crate::discover::{self, Input};
use crate::model::Span;
use crate::parse::{self, ParsedSource, Part, SkipReason, Template};
use crate::report::{Origin, Source};
use crate::suppress;
use std::borrow::Cow;

/// The discovered inputs as sources, in order; standard input is read for its first
/// mention, and a named stream (a FIFO, `/dev/stdin`, a process substitution) when met,
/// each at most `max` bytes. A failure to read one is returned beside the sources.
pub(super) fn sources(
    inputs: Vec<Input>,
    stdin: &mut dyn std::io::Read,
    max: u64,
) -> (Vec<Source>, Vec<ReadError>) {
    let mut errors = Vec::new();
    let mut stdin_read = false;
    let sources = inputs
        .into_iter()
        .map(|input| match input {
            Input::Stdin if stdin_read => stdin_source(None),
            Input::Stdin => {
                stdin_read = true;
                let text = held_text("<stdin>", discover::read_at_most(&mut *stdin, max), max);
                stdin_source(text.map_err(|e| errors.push(e)).ok())
            }
            // The inputs' paths move into the sources: a large tree's file list is held once.
            Input::File { path, context } => Source::file(path, context),
            Input::Stream { path, context } => {
                let mut src = Source::file(path, context);
                let read = src.path().map_or(Ok(Some(Vec::new())), |p| {
                    discover::read_file_at_most(p, max)
                });
                let text = held_text(&src.name, read, max);
                src.origin = Origin::Stdin(text.map_err(|e| errors.push(e)).ok());
                src
            }
        })
        .collect();
    (sources, errors)
}

/// A stream's bytes as the text held for the run, or why there is none.
fn held_text(
    name: &str,
    read: std::io::Result<Option<Vec<u8>>>,
    max: u64,
) -> Result<String, ReadError> {
    match read {
        Ok(Some(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Ok(None) => Err(ReadError::TooLarge {
            name: name.to_owned(),
            limit: max,
        }),
        Err(error) => Err(ReadError::Io {
            name: name.to_owned(),
            error,
        }),
    }
}

fn stdin_source(text: Option<String>) -> Source {
    Source {
        name: "<stdin>".into(),
        origin: Origin::Stdin(text),
        context: false,
        kustomized: None,
    }
}

/// One source parsed, in whole or in part.
#[derive(Debug, Default)]
pub(super) struct ParsedFile {
    pub parsed: ParsedSource,
    /// Its text holds [`suppress::MARKER`]: suppression comments are looked for.
    pub has_suppressions: bool,
}

/// A source's bytes, or what parsing it would say without reading it further.
pub(super) enum Read<'s> {
    Bytes(Cow<'s, [u8]>),
    Skipped(SkipReason),
}

/// Reads a source: its bytes, or a skip (too large, binary).
pub(super) fn read(src: &Source, max: u64) -> Result<Read<'_>, ReadError> {
    let path = match (src.stdin_text(), src.path()) {
        (Some(t), _) => return Ok(Read::Bytes(Cow::Borrowed(t.as_bytes()))),
        (None, Some(path)) => path,
        (None, None) => return Ok(Read::Bytes(Cow::Borrowed(b""))),
    };
    let io = |error| ReadError::Io {
        name: src.name.clone(),
        error,
    };
    // One open, then the size from the open file: one path lookup per read.
    let mut file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(ReadError::Directory {
            name: src.name.clone(),
        });
    }
    if meta.len() > max {
        return Ok(Read::Skipped(SkipReason::TooLarge {
            bytes: meta.len(),
            limit: max,
        }));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // Through `take`: the size is known, and `File`'s own `read_to_end` would ask for it again.
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, u64::MAX), &mut bytes)
        .map_err(io)?;
    if bytes.contains(&0) {
        return Ok(Read::Skipped(SkipReason::Binary));
    }
    Ok(Read::Bytes(Cow::Owned(bytes)))
}

/// Reads and parses the `part` of a source.
pub(super) fn read_and_parse(
    id: usize,
    src: &Source,
    max: u64,
    part: Part,
) -> Result<ParsedFile, ReadError> {
    Ok(match read(src, max)? {
        Read::Skipped(reason) => ParsedFile::skipped(reason),
        Read::Bytes(bytes) => parse_bytes(id, src, bytes, part),
    })
}

/// Parses the `part` of a source's bytes (a file that is not UTF-8 is one problem).
pub(super) fn parse_bytes(id: usize, src: &Source, bytes: Cow<'_, [u8]>, part: Part) -> ParsedFile {
    match to_text(bytes) {
        Ok(text) => parse_text(id, src, &text, part),
        Err(problem) => ParsedFile {
            parsed: ParsedSource {
                problems: vec![problem],
                ..Default::default()
            },
            has_suppressions: false,
        },
    }
}

impl ParsedFile {
    pub(super) fn skipped(reason: SkipReason) -> Self {
        ParsedFile {
            parsed: ParsedSource {
                skipped: Some(reason),
                ..Default::default()
            },
            has_suppressions: false,
        }
    }
}

/// A source's bytes as text, or the problem of a file that is not UTF-8.
fn to_text(bytes: Cow<'_, [u8]>) -> Result<Cow<'_, str>, parse::ParseProblem> {
    let text = match bytes {
        Cow::Borrowed(b) => std::str::from_utf8(b)
            .map(Cow::Borrowed)
            .map_err(|e| e.valid_up_to()),
        Cow::Owned(b) => String::from_utf8(b)
            .map(Cow::Owned)
            .map_err(|e| e.utf8_error().valid_up_to()),
    };
    text.map_err(|at| parse::ParseProblem {
        span: Span::new(at, 0),
        message: format!(
            "file is not valid UTF-8 (invalid byte at offset {at}); Kubernetes manifests must be UTF-8"
        ),
        rejected_value: false,
        object: None,
        header: None,
    })
}

/// Parses a part of a source's text, noting whether it holds a suppression comment.
fn parse_text(id: usize, src: &Source, text: &str, part: Part) -> ParsedFile {
    let mut parsed = parse::parse_part(id, text, src.context, whole_template(src), part);
    if let Some(t) = &src.kustomized {
        parsed.objects.iter_mut().for_each(|o| t.apply(o));
    }
    ParsedFile {
        parsed,
        has_suppressions: !src.context && text.contains(suppress::MARKER),
    }
}

/// Gives the sources the kustomizations' changes karplint applies itself, and appends one
/// source per rendered root (named after its directory), returning each with its map back
/// to the files.
pub(super) fn add_kustomized(
    sources: &mut Vec<Source>,
    plan: crate::kustomize::Plan,
) -> Vec<(usize, crate::kustomize::remap::RenderMap)> {
    if !plan.transforms.is_empty() {
        let normal = crate::discover::Normal::here();
        // Hashed: a tree map compares paths component by component, once per level.
        let transforms: std::collections::HashMap<&std::path::Path, _> = (plan.transforms.iter())
            .map(|(file, t)| (file.as_path(), t))
            .collect();
        for src in sources.iter_mut() {
            let key = src.path().map(|p| normal.of(p));
            src.kustomized = key.and_then(|k| transforms.get(k.as_path()).copied().cloned());
        }
    }
    let mut maps = Vec::new();
    for r in plan.rendered {
        let dir = r.file.parent().map(|d| d.display().to_string());
        let dir = dir.filter(|d| !d.is_empty()).unwrap_or_else(|| ".".into());
        let dir = dir.strip_prefix("./").unwrap_or(&dir).to_owned();
        maps.push((
            sources.len(),
            crate::kustomize::remap::RenderMap::new(&r.text, &r.origin_base, r.patches, &r.file),
        ));
        sources.push(Source {
            name: format!("{dir} (kustomize build)"),
            origin: crate::report::Origin::Stdin(Some(r.text)),
            context: r.context,
            kustomized: None,
        });
    }
    maps
}

/// The template language of a source that is a template whole: a file in a Helm chart's
/// `templates/` directory, or one named `*.tftpl`, `*.hbs` or `*.handlebars`.
fn whole_template(src: &Source) -> Option<Template> {
    let path = src.path()?;
    if discover::is_helm_template(path) {
        return Some(Template::Helm);
    }
    Template::of_file_name(&path.file_name()?.to_string_lossy())
}
