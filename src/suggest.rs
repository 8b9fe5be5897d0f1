//! "Did you mean …?" for names a user typed: rule ids (config `rules:`, `--rule`,
//! `karplint explain`), config keys and enum values (`failOn`, rule levels, `kustomize`,
//! taint effects, add-ons). Shared by the configuration and the command line, so a typo
//! gets the same answer wherever it is written.

/// The known name closest to a misspelt one, when close enough to be a typo: a known name
/// the input begins (`warn` for `warning`), else the nearest within three edits (case
/// ignored) and fewer edits than the input has characters, so `on` is not taken for `off`.
pub fn closest<'a>(typed: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = typed.to_lowercase();
    let typed_len = lower.chars().count();
    if typed_len >= 3 {
        let prefixed = (known.iter())
            .filter(|k| k.to_lowercase().starts_with(&lower))
            .min_by_key(|k| (k.len(), **k));
        if let Some(k) = prefixed {
            return Some(k);
        }
    }
    known
        .iter()
        .map(|k| (strsim::levenshtein(&lower, &k.to_lowercase()), *k))
        .filter(|(d, _)| *d <= 3 && *d < typed_len)
        .min()
        .map(|(_, k)| k)
}

/// "did you mean `x`? " for the closest known name, or nothing: to put before a list of the
/// names allowed.
pub fn did_you_mean(typed: &str, known: &[&str]) -> String {
    closest(typed, known).map_or_else(String::new, |k| format!("did you mean `{k}`? "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEVELS: &[&str] = &["off", "info", "warning", "error"];

    #[test]
    fn typos_prefixes_and_case_are_suggested() {
        assert_eq!(closest("warn", LEVELS), Some("warning"));
        assert_eq!(closest("eror", LEVELS), Some("error"));
        assert_eq!(closest("ERROR", LEVELS), Some("error"));
        assert_eq!(
            closest("untolerated-taints", &["untolerated-taint", "parse-error"]),
            Some("untolerated-taint")
        );
    }

    #[test]
    fn far_or_tiny_names_get_no_suggestion() {
        assert_eq!(closest("on", LEVELS), None);
        assert_eq!(closest("x", LEVELS), None);
        assert_eq!(closest("nonsense-rule", LEVELS), None);
        assert_eq!(did_you_mean("zzzzzz", LEVELS), "");
        assert_eq!(did_you_mean("infp", LEVELS), "did you mean `info`? ");
    }
}
