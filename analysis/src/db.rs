//! The salsa database. It optionally records which queries executed, so that tests can show
//! what an edit re-ran.

use std::sync::{Arc, Mutex};

#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
    log: Option<Arc<Mutex<Vec<String>>>>,
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database that records the name and key of every query it executes.
    pub fn with_execution_log() -> Database {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut log) = sink.lock()
            {
                log.push(format!("{database_key:?}"));
            }
        })));
        Database {
            storage,
            log: Some(log),
        }
    }

    /// The queries executed since the last call (empty without an execution log).
    pub fn take_executed(&self) -> Vec<String> {
        self.log
            .as_ref()
            .and_then(|log| log.lock().ok().map(|mut l| std::mem::take(&mut *l)))
            .unwrap_or_default()
    }
}
