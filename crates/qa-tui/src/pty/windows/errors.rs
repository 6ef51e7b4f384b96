//! What a failed `CreateProcessW` means for the flow's author: the Win32
//! error codes a launch meets, turned into the driver's stable codes.

use crate::codes::TuiCode;
use qa_core::DriverError;

/// `ERROR_FILE_NOT_FOUND`.
const FILE_NOT_FOUND: i32 = 2;
/// `ERROR_PATH_NOT_FOUND`.
const PATH_NOT_FOUND: i32 = 3;
/// `ERROR_ACCESS_DENIED`.
const ACCESS_DENIED: i32 = 5;
/// `ERROR_BAD_EXE_FORMAT`: not a Windows program (a script, a data file).
const BAD_EXE_FORMAT: i32 = 193;
/// `ERROR_EXE_MACHINE_TYPE_MISMATCH`: a program for another CPU.
const EXE_MACHINE_TYPE_MISMATCH: i32 = 216;
/// `ERROR_DIRECTORY`: the working directory is not a directory.
const DIRECTORY: i32 = 267;
/// `ERROR_ELEVATION_REQUIRED`: the program's manifest asks for administrator rights.
const ELEVATION_REQUIRED: i32 = 740;

/// The driver error for starting `argv0` failing with `e`.
pub(crate) fn launch_error(argv0: &str, e: &std::io::Error) -> DriverError {
    match e.raw_os_error() {
        Some(FILE_NOT_FOUND | PATH_NOT_FOUND) => DriverError::new(
            TuiCode::LaunchNotFound,
            format!("program {argv0:?} could not be started: {e}"),
        ),
        Some(ACCESS_DENIED) => DriverError::new(
            TuiCode::LaunchNotExecutable,
            format!("program {argv0:?} may not be run by this user: {e}"),
        ),
        Some(BAD_EXE_FORMAT | EXE_MACHINE_TYPE_MISMATCH) => DriverError::new(
            TuiCode::LaunchNotExecutable,
            format!("{argv0:?} is not a program this Windows can run: {e}"),
        )
        .with_remediation(
            "run a script through its interpreter, e.g. [\"python\", \"script.py\"] or [\"pwsh\", \"-File\", \"script.ps1\"]",
        ),
        Some(DIRECTORY) => DriverError::new(
            TuiCode::LaunchCwdMissing,
            format!("the working directory of {argv0:?} is not a directory: {e}"),
        )
        .with_remediation("fix target.command.cwd (relative to the flow file)"),
        Some(ELEVATION_REQUIRED) => DriverError::new(
            TuiCode::LaunchFailed,
            format!("{argv0:?} asks for administrator rights: {e}"),
        )
        .with_remediation("run ui-qa from an elevated prompt, or test a program that does not require elevation"),
        _ => DriverError::new(
            TuiCode::LaunchFailed,
            format!("starting {argv0:?} failed: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(os: i32) -> &'static str {
        launch_error("tool", &std::io::Error::from_raw_os_error(os)).code
    }

    #[test]
    fn win32_errors_get_the_launch_codes() {
        assert_eq!(code_of(2), TuiCode::LaunchNotFound.as_str());
        assert_eq!(code_of(3), TuiCode::LaunchNotFound.as_str());
        assert_eq!(code_of(5), TuiCode::LaunchNotExecutable.as_str());
        assert_eq!(code_of(193), TuiCode::LaunchNotExecutable.as_str());
        assert_eq!(code_of(216), TuiCode::LaunchNotExecutable.as_str());
        assert_eq!(code_of(267), TuiCode::LaunchCwdMissing.as_str());
        assert_eq!(code_of(740), TuiCode::LaunchFailed.as_str());
        assert_eq!(code_of(1455), TuiCode::LaunchFailed.as_str());
        let e = launch_error("tool", &std::io::Error::from_raw_os_error(193));
        assert!(e.remediation.unwrap().contains("interpreter"));
        assert!(e.message.contains("\"tool\""));
    }
}
