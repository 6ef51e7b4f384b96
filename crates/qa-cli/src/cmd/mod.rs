//! One module per command this binary implements itself (`auth`,
//! `inspect`, `mcp` and `report` have modules of their own).

pub(crate) mod capabilities;
pub(crate) mod check;
pub(crate) mod guide;
pub(crate) mod probe;
pub(crate) mod run;
pub(crate) mod schema;
