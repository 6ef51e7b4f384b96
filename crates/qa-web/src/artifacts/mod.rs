//! Evidence of a page: PNG screenshots with every secret on the page
//! masked or the picture withheld (`screenshot`, `mask`), bounded
//! accessibility snapshots (`ax`), and the console and network logs
//! (`logs`). Everything is written through the run's `Evidence` store,
//! the single source of artifacts.

mod ax;
mod elements;
mod logs;
mod mask;
mod names;
mod screenshot;

pub(crate) use ax::ax_snapshot;
pub(crate) use elements::elements;
pub(crate) use logs::{server_log, write_logs};
pub(crate) use screenshot::{masked_video_frame, screenshot};

use qa_core::{Artifact, ArtifactGroup, DriverError, Evidence};

/// Writes one artifact under a free name (`None`: withheld, it contained
/// a secret).
fn publish(
    evidence: &Evidence,
    group: ArtifactGroup,
    base: &str,
    ext: &str,
    bytes: &[u8],
    step: Option<usize>,
) -> Result<Option<Artifact>, DriverError> {
    let name = evidence.unique_name(group, base, ext);
    Ok(evidence.write(group, &name, bytes, step)?)
}
