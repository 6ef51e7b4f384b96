//! `ui-qa schema`: print a JSON Schema, exactly the checked-in bytes.

use crate::cli::SchemaName;
use crate::exit;

/// `ui-qa schema`.
pub(crate) fn run(name: SchemaName) -> u8 {
    match name {
        SchemaName::Flow => print!("{}", qa_runner::schema::flow_schema_json()),
        SchemaName::Result => print!("{}", qa_runner::schema::result_schema_json()),
        SchemaName::Auth => print!("{}", qa_runner::schema::auth_schema_json()),
    }
    exit::PASSED
}
