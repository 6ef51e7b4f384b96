//! The accessibility bus: found through the session bus this run uses
//! (`org.a11y.Bus.GetAddress`), never through the runner's environment.

use super::display::missing;
use super::objref::ObjRef;
use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::bus::{BusProxy, StatusProxy};
use qa_core::{Deadline, DriverError};
use qa_desktop::DesktopCode;
use std::time::Duration;
use zbus::proxy::CacheProperties;

/// Bound on any single D-Bus method call.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection to one accessibility bus.
#[derive(Clone)]
pub(crate) struct A11y {
    /// The a11y bus connection.
    pub conn: zbus::Connection,
    /// `org.freedesktop.DBus` on the a11y bus (for connection PIDs).
    pub dbus: zbus::fdo::DBusProxy<'static>,
}

/// One application registered on the a11y bus.
#[derive(Debug, Clone)]
pub(crate) struct AppEntry {
    /// Its root accessible.
    pub root: ObjRef,
    /// Its accessible name.
    pub name: String,
    /// The process owning its bus connection.
    pub pid: Option<u32>,
    /// How many children (windows) it exposes.
    pub child_count: i32,
}

fn bus_blocked(reason: String) -> DriverError {
    DriverError::blocked(
        DesktopCode::A11yBusUnavailable,
        missing(
            "accessibility-bus",
            reason,
            "apt-get install -y at-spi2-core (and make sure the session bus can activate org.a11y.Bus)",
        ),
    )
}

/// Connects to the session bus at `session_addr`, asks it for the a11y bus
/// address (activating at-spi-bus-launcher) and connects there. When `owned`
/// (our private bus), also sets `org.a11y.Status.IsEnabled` so toolkits that
/// wait for an assistive technology (Qt) turn their bridge on.
pub(crate) async fn connect(
    session_addr: &str,
    owned: bool,
    deadline: Deadline,
) -> Result<A11y, DriverError> {
    let work = async {
        let session = zbus::connection::Builder::address(session_addr)
            .map_err(|e| format!("session bus address {session_addr:?}: {e}"))?
            .method_timeout(CALL_TIMEOUT)
            .build()
            .await
            .map_err(|e| format!("cannot connect to the session bus: {e}"))?;
        let bus = BusProxy::new(&session)
            .await
            .map_err(|e| format!("org.a11y.Bus proxy: {e}"))?;
        let addr = bus
            .get_address()
            .await
            .map_err(|e| format!("org.a11y.Bus.GetAddress failed: {e}"))?;
        if owned {
            if let Ok(status) = StatusProxy::new(&session).await {
                let _ = status.set_is_enabled(true).await;
            }
        }
        let conn = zbus::connection::Builder::address(addr.as_str())
            .map_err(|e| format!("a11y bus address {addr:?}: {e}"))?
            .method_timeout(CALL_TIMEOUT)
            .build()
            .await
            .map_err(|e| format!("cannot connect to the accessibility bus at {addr}: {e}"))?;
        let dbus = zbus::fdo::DBusProxy::builder(&conn)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| format!("org.freedesktop.DBus proxy: {e}"))?;
        Ok::<_, String>(A11y { conn, dbus })
    };
    match deadline.run(work).await {
        Some(Ok(a)) => Ok(a),
        Some(Err(reason)) => Err(bus_blocked(reason)),
        None => Err(bus_blocked(
            "the accessibility bus did not answer before the deadline".into(),
        )),
    }
}

impl A11y {
    /// The process id behind a bus name on the a11y bus.
    pub(crate) async fn pid_of(&self, bus_name: &str) -> Option<u32> {
        let name = zbus::names::BusName::try_from(bus_name).ok()?;
        self.dbus.get_connection_unix_process_id(name).await.ok()
    }

    /// Every application registered right now, with PIDs (concurrently).
    pub(crate) async fn applications(&self) -> Result<Vec<AppEntry>, DriverError> {
        let root = ObjRef::registry_root();
        let proxy = accessible(&self.conn, &root)
            .await
            .map_err(|e| bus_blocked(format!("registry: {e}")))?;
        let children = proxy.get_children().await.map_err(|e| {
            bus_blocked(format!(
                "the AT-SPI registry did not list applications: {e}"
            ))
        })?;
        let refs: Vec<ObjRef> = children.iter().filter_map(ObjRef::from_owned).collect();
        let entries = futures_util::future::join_all(refs.into_iter().map(|r| async move {
            let (pid, info) = futures_util::join!(self.pid_of(&r.bus), async {
                let p = accessible(&self.conn, &r).await.ok()?;
                let (n, c) = futures_util::join!(p.name(), p.child_count());
                Some((n.unwrap_or_default(), c.unwrap_or(0)))
            });
            let (name, child_count) = info.unwrap_or_default();
            AppEntry {
                root: r,
                name,
                pid,
                child_count,
            }
        }))
        .await;
        Ok(entries)
    }
}

/// An `Accessible` proxy without property caching (no extra round trips).
pub(crate) async fn accessible<'a>(
    conn: &zbus::Connection,
    o: &'a ObjRef,
) -> zbus::Result<AccessibleProxy<'a>> {
    AccessibleProxy::builder(conn)
        .destination(o.bus.as_str())?
        .path(o.path.as_str())?
        .cache_properties(CacheProperties::No)
        .build()
        .await
}

/// Any atspi interface proxy (`ComponentProxy`, `ActionProxy`, …) for an
/// object, without caching.
pub(crate) async fn proxy<'a, T>(conn: &zbus::Connection, o: &'a ObjRef) -> zbus::Result<T>
where
    T: From<zbus::Proxy<'a>> + zbus::proxy::Defaults,
{
    zbus::proxy::Builder::<T>::new(conn)
        .destination(o.bus.as_str())?
        .path(o.path.as_str())?
        .cache_properties(CacheProperties::No)
        .build()
        .await
}
