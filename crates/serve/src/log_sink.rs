//! Log lines written by a thread of their own.
//!
//! Why not write each line where it is logged? The service logs one line per request, on the
//! runtime's worker threads. A `write(2)` to a file or pipe usually takes microseconds, but a
//! busy disk (the kernel throttling writers of dirty pages) or a slow reader stalls it for
//! milliseconds, and every task on that worker waits meanwhile: the tail of every review's
//! latency, not only the logging one's. Here a line costs a copy into a bounded channel; one
//! thread writes the lines in order, in batches, and flushes whenever it has caught up.
//!
//! No line is dropped: when [`LOG_BACKLOG_LINES`] lines wait, the next one waits for room.

use std::{
    fmt,
    io::{self, Write},
    sync::mpsc::{self, Receiver, SyncSender, TryRecvError},
    thread::JoinHandle,
};

/// How many lines may wait for the writer thread before a logging thread waits for room.
pub const LOG_BACKLOG_LINES: usize = 16_384;

/// The writer thread's buffer: lines are written in batches of up to this many bytes.
const BATCH_BYTES: usize = 64 * 1024;

enum Message {
    Line(Vec<u8>),
    Stop,
}

/// Makes one [`LogLine`] per log event (`tracing_subscriber`'s `with_writer(move || lines.line())`).
/// Cheap to clone.
#[derive(Clone)]
pub struct LogLines {
    sender: SyncSender<Message>,
}

/// One log event's bytes, handed to the writer thread when dropped.
pub struct LogLine {
    sender: SyncSender<Message>,
    bytes: Vec<u8>,
}

/// Stops the writer thread when dropped, once it has written and flushed every line sent
/// before. Keep it until the last line is logged.
pub struct LogSinkGuard {
    sender: SyncSender<Message>,
    thread: Option<JoinHandle<()>>,
}

/// Starts a thread writing log lines to `out`. A line logged after the guard was dropped (or
/// if the thread cannot start) goes straight to standard error.
pub fn log_sink<W: Write + Send + 'static>(out: W) -> (LogLines, LogSinkGuard) {
    let (sender, receiver) = mpsc::sync_channel(LOG_BACKLOG_LINES);
    let thread = std::thread::Builder::new()
        .name("log-writer".to_owned())
        .spawn(move || pump(&receiver, out))
        .ok();
    (
        LogLines {
            sender: sender.clone(),
        },
        LogSinkGuard { sender, thread },
    )
}

fn pump<W: Write>(receiver: &Receiver<Message>, out: W) {
    let mut out = io::BufWriter::with_capacity(BATCH_BYTES, out);
    loop {
        let message = match receiver.try_recv() {
            Ok(message) => message,
            Err(TryRecvError::Empty) => {
                // Caught up: what was written becomes visible before waiting for more.
                let _ = out.flush();
                match receiver.recv() {
                    Ok(message) => message,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        match message {
            // An output that fails cannot be logged to; the lines are lost as they would be.
            Message::Line(bytes) => {
                let _ = out.write_all(&bytes);
            }
            Message::Stop => break,
        }
    }
    let _ = out.flush();
}

impl LogLines {
    /// A writer for one log event.
    pub fn line(&self) -> LogLine {
        LogLine {
            sender: self.sender.clone(),
            bytes: Vec::new(),
        }
    }
}

impl Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        if self.bytes.is_empty() {
            return;
        }
        let bytes = std::mem::take(&mut self.bytes);
        if let Err(mpsc::SendError(Message::Line(bytes))) = self.sender.send(Message::Line(bytes)) {
            let _ = io::stderr().write_all(&bytes);
        }
    }
}

impl Drop for LogSinkGuard {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            // The thread ends after every line sent before this message.
            if self.sender.send(Message::Stop).is_ok() {
                let _ = thread.join();
            }
        }
    }
}

impl fmt::Debug for LogLines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogLines").finish_non_exhaustive()
    }
}

impl fmt::Debug for LogLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the line itself.
        f.debug_struct("LogLine")
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl fmt::Debug for LogSinkGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogSinkGuard")
            .field("running", &self.thread.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// An output the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_line_is_written_in_order_by_the_time_the_guard_is_dropped() {
        let out = Shared::default();
        let (lines, guard) = log_sink(out.clone());
        let mut expected = String::new();
        // More lines than the backlog holds: the loggers wait for room, none is lost.
        for n in 0..LOG_BACKLOG_LINES * 2 {
            let text = format!("line {n}\n");
            let mut line = lines.line();
            line.write_all(text.as_bytes()).unwrap();
            drop(line);
            expected.push_str(&text);
        }
        drop(guard);
        assert_eq!(
            String::from_utf8(out.0.lock().unwrap().clone()).unwrap(),
            expected
        );
    }

    #[test]
    fn lines_from_many_threads_stay_whole() {
        let out = Shared::default();
        let (lines, guard) = log_sink(out.clone());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let lines = lines.clone();
                std::thread::spawn(move || {
                    for n in 0..1000 {
                        let mut line = lines.line();
                        // One event may arrive in pieces; it is sent as one line.
                        write!(line, "thread {t} ").unwrap();
                        writeln!(line, "line {n}").unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        drop(guard);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 4000);
        for t in 0..4 {
            let numbers: Vec<usize> = text
                .lines()
                .filter_map(|line| line.strip_prefix(&format!("thread {t} line ")))
                .map(|n| n.parse().unwrap())
                .collect();
            assert_eq!(numbers, (0..1000).collect::<Vec<_>>(), "thread {t}");
        }
    }

    #[test]
    fn an_empty_event_sends_nothing() {
        let out = Shared::default();
        let (lines, guard) = log_sink(out.clone());
        drop(lines.line());
        drop(guard);
        assert!(out.0.lock().unwrap().is_empty());
        assert_eq!(format!("{:?}", lines.line()), "LogLine { bytes: 0 }");
    }
}
