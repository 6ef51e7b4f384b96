use super::*;

const SECRET: &str = "hunter2-Sekret-77";

fn ws() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

#[cfg(unix)]
fn write(path: &Path, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(unix)]
fn bearer_file() -> String {
    format!(
        r#"{{ "version": 1, "profiles": {{
            // a comment
            "api": {{ "type": "bearer", "description": "API user",
                      "allowedOrigins": ["http://127.0.0.1:9"], "token": "{SECRET}" }},
        }} }}"#
    )
}

#[test]
fn no_file_lists_nothing_and_creates_nothing() {
    let d = ws();
    let w = d.path().join(".ui-qa");
    assert!(list(&w).unwrap().is_empty());
    assert!(!w.exists(), "auth list must not create the workspace");
}

#[cfg(unix)]
#[test]
fn missing_file_creates_a_private_template_and_asks_for_credentials() {
    use std::os::unix::fs::PermissionsExt;
    let d = ws();
    let w = d.path().join(".ui-qa");
    let s = Secrets::new();
    let b = prepare(&w, "staff", &s).unwrap_err();
    assert_eq!(b.kind, BlockKind::ProvideCredentials);
    assert!(b.remediation.contains("auth.jsonc"), "{}", b.remediation);
    let f = w.join("auth.jsonc");
    let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // The template parses and has no profile: now the profile is missing.
    let b = prepare(&w, "staff", &s).unwrap_err();
    assert_eq!(b.kind, BlockKind::UpdateRequired);
    assert!(b.reason.contains("`staff`"));
}

#[cfg(unix)]
#[test]
fn a_readable_by_others_or_linked_file_is_refused() {
    let d = ws();
    let w = d.path().join(".ui-qa");
    let f = w.join("auth.jsonc");
    write(&f, &bearer_file(), 0o644);
    let s = Secrets::new();
    let b = prepare(&w, "api", &s).unwrap_err();
    assert_eq!(b.kind, BlockKind::FileRefused);
    assert!(b.remediation.contains("chmod 600"), "{}", b.remediation);
    assert!(s.is_empty(), "nothing is read from a refused file");
    // A symlink to a private file elsewhere.
    let real = d.path().join("elsewhere.jsonc");
    write(&real, &bearer_file(), 0o600);
    std::fs::remove_file(&f).unwrap();
    std::os::unix::fs::symlink(&real, &f).unwrap();
    let b = prepare(&w, "api", &s).unwrap_err();
    assert_eq!(b.kind, BlockKind::FileRefused);
    assert!(b.reason.contains("symbolic link"), "{}", b.reason);
    assert!(list(&w).is_err());
    // A symlinked directory on the way.
    std::fs::remove_file(&f).unwrap();
    let other = d.path().join("other");
    write(&other.join("auth.jsonc"), &bearer_file(), 0o600);
    let linked = d.path().join("linked");
    std::os::unix::fs::symlink(&other, &linked).unwrap();
    assert_eq!(
        prepare(&linked, "api", &s).unwrap_err().kind,
        BlockKind::FileRefused
    );
}

#[cfg(unix)]
#[test]
fn a_private_file_registers_the_values_before_anything_runs() {
    let d = ws();
    let w = d.path().join(".ui-qa");
    write(&w.join("auth.jsonc"), &bearer_file(), 0o600);
    let s = Secrets::new();
    let p = prepare(&w, "api", &s).unwrap();
    assert_eq!(p.kind, ProfileKind::Bearer);
    assert_eq!(s.redact(&format!("x {SECRET} y")), "x [REDACTED] y");
    assert_eq!(p.header.as_ref().unwrap().0, "Authorization");
    let l = list(&w).unwrap();
    assert_eq!(l.len(), 1);
    let json = serde_json::to_string(&l).unwrap();
    assert!(!json.contains(SECRET), "{json}");
    assert!(json.contains("API user"));
}

#[test]
fn parse_errors_point_at_the_field_and_never_show_a_value() {
    let text = format!(
        r#"{{ "profiles": {{ "api": {{ "type": "bearer", "allowedOrigins": ["http://a.test"], "token": 5, "scheme": "{SECRET}" }} }} }}"#
    );
    let e = file::parse(&text).unwrap_err();
    assert_eq!(e.pointer, "/profiles/api/token");
    let text = format!(
        r#"{{ "profiles": {{ "api": {{ "type": "bearer", "allowedOrigins": ["http://a.test/x"], "token": "{SECRET}" }} }} }}"#
    );
    let e = file::parse(&text).unwrap_err();
    assert_eq!(e.pointer, "/profiles/api/allowedOrigins/0");
    let text =
        r#"{ "profiles": { "api": { "type": "bearer", "allowedOrigins": [], "token": 7 } } }"#;
    let e = file::parse(text).unwrap_err();
    assert!(!e.message.contains('7') || e.pointer.ends_with("token"));
    assert_eq!(
        without_values(r#"invalid type: string "hunter2", expected u64"#),
        r#"invalid type: string "…", expected u64"#
    );
}

#[test]
fn the_template_is_a_valid_empty_file() {
    let f = file::parse(TEMPLATE).unwrap();
    assert!(f.profiles.is_empty());
}

#[test]
fn storage_state_cookies_go_only_to_allowed_origins() {
    let st: StorageState = serde_json::from_str(
        r#"{"cookies":[{"name":"a","value":"vvvv1","domain":"127.0.0.1","path":"/"},
                       {"name":"b","value":"vvvv2","domain":".example.com","path":"/"}],
            "origins":[{"origin":"http://127.0.0.1:5","localStorage":[{"name":"k","value":"vvvv3"}]},
                       {"origin":"http://127.0.0.1:6","localStorage":[{"name":"k","value":"vvvv4"}]}]}"#,
    )
    .unwrap();
    let (c, s, dropped) = st.for_origins(&["http://127.0.0.1:5".into()]);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].origin, "http://127.0.0.1:5");
    assert_eq!(s.len(), 1);
    assert_eq!(dropped, 2);
}
