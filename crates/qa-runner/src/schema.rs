//! JSON Schemas generated from the Rust types: `schemas/flow.schema.json`,
//! `schemas/result.schema.json` and `schemas/auth.schema.json`.

use qa_core::flow::{BrowserAction, DesktopAction, TerminalAction};
use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// Adds the options every step carries to one action's argument schema.
fn step_schema(name: &str, args: Schema, target: Option<&Value>) -> Value {
    let mut v = args.to_value();
    let obj = v.as_object_mut().expect("object schema");
    obj.remove("$schema");
    obj.remove("title");
    let props = obj
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("properties");
    let mut ordered = Map::new();
    ordered.insert("action".into(), json!({ "const": name }));
    for (k, p) in std::mem::take(props) {
        ordered.insert(k, p);
    }
    ordered.insert(
        "name".into(),
        json!({
            "description": "Name used for evidence files.",
            "type": "string",
            "pattern": "^[A-Za-z0-9._-]{1,100}$"
        }),
    );
    ordered.insert(
        "timeoutMs".into(),
        json!({
            "description": "Deadline of this step in milliseconds (default: the flow's assertTimeoutMs, 5000, for assert* steps; its stepTimeoutMs, 15000, for the rest).",
            "type": "integer",
            "minimum": 1,
            "maximum": 600000
        }),
    );
    if let Some(t) = target {
        ordered.insert("target".into(), t.clone());
    }
    *props = ordered;
    let req = obj
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .expect("required");
    req.insert(0, json!("action"));
    obj.insert("type".into(), json!("object"));
    obj.insert("additionalProperties".into(), json!(false));
    v
}

fn kind_steps(list: Vec<(&'static str, Schema)>, target: Option<&Value>) -> Value {
    json!({ "oneOf": list.into_iter().map(|(n, s)| step_schema(n, s, target)).collect::<Vec<_>>() })
}

/// The flow schema, as pretty JSON with a trailing newline.
pub fn flow_schema_json() -> String {
    let mut g = generator();
    let target = g.subschema_for::<qa_core::flow::RawTarget>();
    let viewport = g.subschema_for::<qa_core::flow::Viewport>();
    let environment = g.subschema_for::<qa_core::flow::Environment>();
    let evidence = g.subschema_for::<qa_core::recording::EvidenceSettings>();
    let step_target = g.subschema_for::<qa_core::flow::StepTarget>().to_value();
    let browser = kind_steps(BrowserAction::arg_schemas(&mut g), Some(&step_target));
    let terminal = kind_steps(TerminalAction::arg_schemas(&mut g), None);
    let desktop = kind_steps(DesktopAction::arg_schemas(&mut g), None);
    let mut defs: Map<String, Value> = g.take_definitions(true).into_iter().collect();
    defs.insert("BrowserStep".into(), browser);
    defs.insert("TerminalStep".into(), terminal);
    defs.insert("DesktopStep".into(), desktop);
    let steps = |r: &str| {
        json!({
            "type": "array",
            "minItems": 1,
            "maxItems": qa_core::flow::DEFAULT_MAX_STEPS,
            "items": { "$ref": format!("#/$defs/{r}") }
        })
    };
    let doc = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://ui-qa.dev/schemas/flow.schema.json",
        "title": "ui-qa flow",
        "description": "A ui-qa flow: exactly one target (url | command | application) and 1..=100 steps. JSONC (comments, trailing commas) is accepted by ui-qa; duplicate keys are rejected.",
        "type": "object",
        "additionalProperties": false,
        "required": ["target", "steps"],
        "properties": {
            "$schema": { "type": "string" },
            "version": { "const": 1 },
            "name": { "type": "string" },
            "target": target.to_value(),
            "viewport": viewport.to_value(),
            "environment": environment.to_value(),
            "evidence": evidence.to_value(),
            "timeoutMs": { "type": "integer", "minimum": 1, "maximum": 3600000 },
            "stepTimeoutMs": { "description": "Default deadline of actions and waits (default 15000).", "type": "integer", "minimum": 1, "maximum": 600000 },
            "assertTimeoutMs": { "description": "Default deadline of assert* steps (default 5000).", "type": "integer", "minimum": 1, "maximum": 600000 },
            "vars": { "description": "Defaults of ${var.NAME} placeholders in the flow's strings; ui-qa run --var NAME=VALUE overrides them.", "type": "object", "propertyNames": { "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" }, "additionalProperties": { "type": "string" } },
            "steps": { "type": "array", "minItems": 1, "maxItems": qa_core::flow::DEFAULT_MAX_STEPS }
        },
        "oneOf": [
            {
                "title": "browser flow",
                "properties": {
                    "target": { "anyOf": [
                        { "required": ["url"] }, { "required": ["baseUrl"] },
                        { "required": ["serve"] }, { "required": ["server"] }
                    ], "not": { "anyOf": [ { "required": ["command"] }, { "required": ["application"] } ] } },
                    "steps": steps("BrowserStep")
                }
            },
            {
                "title": "terminal flow",
                "properties": {
                    "target": { "required": ["command"], "not": { "anyOf": [
                        { "required": ["url"] }, { "required": ["baseUrl"] }, { "required": ["serve"] },
                        { "required": ["server"] }, { "required": ["application"] }
                    ] } },
                    "steps": steps("TerminalStep")
                }
            },
            {
                "title": "desktop flow",
                "properties": {
                    "target": { "required": ["application"], "not": { "anyOf": [
                        { "required": ["url"] }, { "required": ["baseUrl"] }, { "required": ["serve"] },
                        { "required": ["server"] }, { "required": ["command"] }
                    ] } },
                    "steps": steps("DesktopStep")
                }
            }
        ],
        "$defs": Value::Object(defs)
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("schema serializes");
    s.push('\n');
    s
}

/// The result schema, as pretty JSON with a trailing newline.
pub fn result_schema_json() -> String {
    let g = generator();
    let schema = g.into_root_schema_for::<qa_core::result::RunResult>();
    let mut s = serde_json::to_string_pretty(&schema).expect("schema serializes");
    s.push('\n');
    s
}

/// The auth file schema (`.ui-qa/auth.jsonc`), as pretty JSON with a
/// trailing newline.
pub fn auth_schema_json() -> String {
    let g = generator();
    let schema = g.into_root_schema_for::<crate::auth::AuthFile>();
    let mut s = serde_json::to_string_pretty(&schema).expect("schema serializes");
    s.push('\n');
    s
}
