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

    /// Makes `file`'s items (a tracked struct per statement) on a handle of their own, dropped
    /// after: salsa 0.28.5 keeps the tables a query used to make them at their largest size on
    /// the handle's query stack for as long as the handle lives (salsa-rs/salsa#1236), about a
    /// hundred bytes per statement of the file. The items are the same on every handle.
    pub fn make_items(&self, file: crate::File) {
        let apart = self.clone();
        crate::items::module_items(&apart, file);
    }

    /// The queries executed since the last call (empty without an execution log).
    pub fn take_executed(&self) -> Vec<String> {
        self.log
            .as_ref()
            .and_then(|log| log.lock().ok().map(|mut l| std::mem::take(&mut *l)))
            .unwrap_or_default()
    }
}
