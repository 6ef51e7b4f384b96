//! `ui-qa guide`: print one embedded guide.

use crate::{exit, guides};

/// `ui-qa guide`.
pub(crate) fn run(backend: &str, topic: Option<&str>) -> u8 {
    match guides::find(backend, topic) {
        Ok(g) if g.text.len() > guides::MAX_GUIDE_BYTES => {
            eprintln!("error: guide.too_large: the embedded guide exceeds its size bound");
            exit::INVALID
        }
        Ok(g) => {
            print!("{}", g.text);
            exit::PASSED
        }
        Err(e) => {
            eprintln!("error: {e}");
            if let guides::GuideError::UnknownTopic(_) | guides::GuideError::Traversal(_) = e {
                eprintln!(
                    "topics for {backend}: {}",
                    guides::topics(backend).join(", ")
                );
            }
            exit::INVALID
        }
    }
}
