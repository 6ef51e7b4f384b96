//! "Did you mean …?": the closest known word to a misspelt one.

/// The candidate closest to `word` (case-insensitive Jaro–Winkler, at least
/// 0.8 similar), if any.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&w, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `; did you mean "x"?` or nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match closest(word, candidates) {
        Some(c) => format!("; did you mean {c:?}?"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_words_are_suggested_far_ones_are_not() {
        assert_eq!(closest("clik", ["click", "fill", "hover"]), Some("click"));
        assert_eq!(closest("buton", ["button", "link"]), Some("button"));
        assert_eq!(closest("pushbutton", ["button", "link"]), Some("button"));
        assert_eq!(closest("zzz", ["click", "fill"]), None);
        assert_eq!(
            did_you_mean("Clikc", ["click"]),
            "; did you mean \"click\"?"
        );
    }
}
