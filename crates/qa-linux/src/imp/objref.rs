//! A reference to one accessible object (bus name + object path): the leaf
//! type every module that talks to the accessibility bus shares.

/// A reference to one accessible object: bus name + object path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ObjRef {
    /// Unique bus name of the application.
    pub bus: String,
    /// Object path.
    pub path: String,
}

/// The object path of the AT-SPI registry's root (and of every
/// application's root accessible).
pub(crate) const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";

impl ObjRef {
    /// From an atspi object reference (`None` for the null reference).
    pub(crate) fn from_owned(o: &atspi::ObjectRefOwned) -> Option<ObjRef> {
        if o.is_null() {
            return None;
        }
        Some(ObjRef {
            bus: o.name_as_str()?.to_string(),
            path: o.path_as_str().to_string(),
        })
    }

    /// The registry's root accessible (its children are applications).
    pub(crate) fn registry_root() -> ObjRef {
        ObjRef {
            bus: "org.a11y.atspi.Registry".into(),
            path: ROOT_PATH.into(),
        }
    }
}
