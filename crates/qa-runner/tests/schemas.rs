//! The checked-in JSON Schemas are exactly what the Rust types generate.

use std::path::Path;

#[test]
fn schema_files_match_generated() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    let flow = std::fs::read_to_string(root.join("flow.schema.json"))
        .expect("schemas/flow.schema.json exists (run `cargo xtask schemas`)");
    assert!(
        flow == qa_runner::schema::flow_schema_json(),
        "schemas/flow.schema.json drifted from the Rust types; run `cargo xtask schemas`"
    );
    let result = std::fs::read_to_string(root.join("result.schema.json"))
        .expect("schemas/result.schema.json exists (run `cargo xtask schemas`)");
    assert!(
        result == qa_runner::schema::result_schema_json(),
        "schemas/result.schema.json drifted from the Rust types; run `cargo xtask schemas`"
    );
    let auth = std::fs::read_to_string(root.join("auth.schema.json"))
        .expect("schemas/auth.schema.json exists (run `cargo xtask schemas`)");
    assert!(
        auth == qa_runner::schema::auth_schema_json(),
        "schemas/auth.schema.json drifted from the Rust types; run `cargo xtask schemas`"
    );
}
