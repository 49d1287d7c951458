//! `wsp run --dump-tasks FILE`: the task stream a run executed, one line per task, in the
//! format the NPU tree's host replay writes too, so that its `wsp_compare` can check that the
//! emitted expander enumerates the same tasks with the same placement and ordering.
//!
//! ```text
//! # wsp tasks v1
//! execution <program>
//! task=<id> kind=kernel name=<kernel> index=<v0,v1|-> aicpu=<q> stream=<s|-1> after=<p,..|->
//! task=<id> kind=barrier name=- index=- aicpu=- stream=- after=<..>
//! task=<id> kind=collective name=<derived tensor> index=- aicpu=- stream=- after=<..>
//! ```

use std::io;
use std::path::Path;

use wsp_ir::Program;

use crate::clock::placement;
use crate::exec::Collective;
use crate::graph::{Graph, TaskId, TaskKind};
use wsp_files::write_atomically;

/// Writes the tasks of each execution (`program`, its task ids `lo..hi`) of an expanded graph.
pub fn write_tasks(
    path: &Path,
    graph: &Graph,
    executions: &[(&Program, TaskId, TaskId)],
    kernel_names: &[String],
    collectives: &[Collective],
    aicpus: u32,
) -> Result<(), String> {
    write_atomically(path, |out| {
        writeln!(out, "# wsp tasks v1")?;
        for &(program, lo, hi) in executions {
            writeln!(out, "execution {}", program.name)?;
            let place = placement(graph, lo, hi, &program.schedule, aicpus.max(1));
            let (at, preds) = graph.predecessors(lo, hi);
            for t in lo..hi {
                let i = (t - lo) as usize;
                let task = &graph.tasks[t as usize];
                write!(out, "task={t} ")?;
                match task.kind {
                    TaskKind::Kernel(k) => {
                        let name = kernel_names.get(k as usize).map_or("?", String::as_str);
                        write!(out, "kind=kernel name={name} index=")?;
                        let mut first = true;
                        let mut err = Ok(());
                        graph.index_of(t, |v| {
                            let sep = if first { "" } else { "," };
                            first = false;
                            if err.is_ok() {
                                err = write!(out, "{sep}{v}");
                            }
                        });
                        err?;
                        if first {
                            write!(out, "-")?;
                        }
                        let stream = place.stream_of.get(i).map_or(-1, |&s| i64::from(s));
                        write!(out, " aicpu={} stream={stream}", place.queue_of[i])?;
                    }
                    TaskKind::Barrier => {
                        write!(out, "kind=barrier name=- index=- aicpu=- stream=-")?
                    }
                    TaskKind::Collective(c) => {
                        let name = collectives
                            .get(c as usize)
                            .map_or("?", |c| c.tensor.as_str());
                        write!(out, "kind=collective name={name} index=- aicpu=- stream=-")?;
                    }
                    TaskKind::Launch(_) => {
                        return Err(io::Error::other("the graph was not expanded"));
                    }
                }
                let mut p: Vec<TaskId> = preds[at[i] as usize..at[i + 1] as usize]
                    .iter()
                    .map(|&p| lo + p)
                    .collect();
                p.sort_unstable();
                p.dedup();
                if p.is_empty() {
                    writeln!(out, " after=-")?;
                } else {
                    let list: Vec<String> = p.iter().map(u32::to_string).collect();
                    writeln!(out, " after={}", list.join(","))?;
                }
            }
        }
        Ok(())
    })
}
