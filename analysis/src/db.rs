//! The salsa database. It optionally records which queries executed, so that tests can show
//! what an edit re-ran.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
    log: Option<Arc<Mutex<Vec<String>>>>,
    /// The files whose diagnostics were asked for once: the first time, their items are
    /// analyzed in parallel (`check::analyze_items_in_parallel`); after an edit, the few
    /// queries it touches run on the thread that asks.
    analyzed: Arc<Mutex<HashSet<crate::File>>>,
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
            analyzed: Arc::default(),
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

    /// Whether this is the first time `file`'s diagnostics are asked for on this database.
    pub(crate) fn first_analysis(&self, file: crate::File) -> bool {
        self.analyzed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(file)
    }

    /// The queries executed since the last call (empty without an execution log).
    pub fn take_executed(&self) -> Vec<String> {
        self.log
            .as_ref()
            .and_then(|log| log.lock().ok().map(|mut l| std::mem::take(&mut *l)))
            .unwrap_or_default()
    }
}
