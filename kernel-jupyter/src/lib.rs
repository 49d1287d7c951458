//! The WSP Jupyter kernel: `wsp jupyter kernel CONNECTION_FILE` serves the Jupyter messaging
//! protocol over ZeroMQ; `wsp jupyter install` writes the kernelspec that starts it.
//!
//! A notebook is one program: each executed cell is checked by the analyzer in the context of
//! the cells executed before it, its statements that run are compiled by codegen (cached) and
//! run in a child process (`wsp __exec`), and tensor values persist between cells on disk, so a
//! crash in native code loses nothing.

mod history;
mod ide;
pub mod install;
mod magics;
mod notebook;
mod read;
pub mod render;
mod server;

pub use crate::notebook::{CellError, Notebook, Outcome, Output};
pub use crate::server::serve;
