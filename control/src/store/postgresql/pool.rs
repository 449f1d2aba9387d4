//! The pool's connections: r2d2's PostgreSQL manager, except that a
//! connection is checked on checkout (`SELECT ''`, one round trip) only
//! when it sat idle for [`CHECK_AFTER_IDLE`] or longer. Under load a
//! connection comes back within milliseconds and the check was a round
//! trip in every few a request made; one that broke within that window
//! (the server restarted) fails its query, the call answers 503
//! `unavailable` as any store failure does, and the pool drops it on
//! return.

use postgres::{Client, NoTls};
use r2d2_postgres::r2d2::ManageConnection;
use r2d2_postgres::PostgresConnectionManager;
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

/// Idle time after which a connection is checked before use.
pub const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Makes and checks the pool's connections.
pub struct CheckedWhenIdle {
    inner: PostgresConnectionManager<NoTls>,
}

impl CheckedWhenIdle {
    pub fn new(config: postgres::Config) -> Self {
        Self {
            inner: PostgresConnectionManager::new(config, NoTls),
        }
    }
}

/// A client and when it last came back to the pool.
pub struct PooledClient {
    client: Client,
    returned: Instant,
}

impl Deref for PooledClient {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl DerefMut for PooledClient {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}

impl ManageConnection for CheckedWhenIdle {
    type Connection = PooledClient;
    type Error = postgres::Error;

    fn connect(&self) -> Result<PooledClient, postgres::Error> {
        Ok(PooledClient {
            client: self.inner.connect()?,
            returned: Instant::now(),
        })
    }

    fn is_valid(&self, conn: &mut PooledClient) -> Result<(), postgres::Error> {
        if conn.returned.elapsed() < CHECK_AFTER_IDLE {
            return Ok(());
        }
        self.inner.is_valid(&mut conn.client)
    }

    /// Called by r2d2 as the connection comes back.
    fn has_broken(&self, conn: &mut PooledClient) -> bool {
        conn.returned = Instant::now();
        self.inner.has_broken(&mut conn.client)
    }
}
