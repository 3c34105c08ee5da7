//! A client of the build's jobserver: cargo hands every rustc a pipe of
//! tokens (`CARGO_MAKEFLAGS="-j --jobserver-auth=R,W"`), one byte per job
//! that may run beside the ones already running, shared by every process of
//! the build. A thread that compiles a target beside the expansion's own
//! thread holds a token, so that the threads of all the kernels and crates
//! of a build together stay within `cargo build -j`.
//!
//! The pipe's ends are opened anew through `/proc/self/fd` (or, for GNU
//! make's `fifo:PATH`, by name), the read end non-blocking: a token is taken
//! only if one is free now, never waited for, so an expansion never waits
//! on other crates' jobs. Each token is written back when dropped.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The jobserver of the build this process runs in.
#[derive(Debug)]
pub(crate) struct Jobserver {
    read: Mutex<File>,
    write: Mutex<File>,
}

/// One job's token, returned to the jobserver when dropped.
#[derive(Debug)]
pub(crate) struct Token<'a> {
    server: &'a Jobserver,
    byte: u8,
}

impl Jobserver {
    /// The build's jobserver, from `CARGO_MAKEFLAGS` or `MAKEFLAGS`; `None`
    /// outside a build or when its pipe cannot be opened.
    pub(crate) fn of_this_build() -> Option<&'static Jobserver> {
        static SERVER: OnceLock<Option<Jobserver>> = OnceLock::new();
        SERVER
            .get_or_init(|| {
                ["CARGO_MAKEFLAGS", "MAKEFLAGS"]
                    .into_iter()
                    .filter_map(|name| std::env::var(name).ok())
                    .find_map(|flags| Jobserver::open(&flags))
            })
            .as_ref()
    }

    /// The jobserver that make-style `flags` name.
    fn open(flags: &str) -> Option<Jobserver> {
        let (read, write) = pipe_paths(flags)?;
        let read = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(read)
            .ok()?;
        let write = OpenOptions::new().write(true).open(write).ok()?;
        let is_pipe = |file: &File| file.metadata().is_ok_and(|m| m.file_type().is_fifo());
        (is_pipe(&read) && is_pipe(&write)).then(|| Jobserver {
            read: Mutex::new(read),
            write: Mutex::new(write),
        })
    }

    /// A token if one is free now.
    pub(crate) fn try_acquire(&self) -> Option<Token<'_>> {
        let mut byte = [0u8; 1];
        let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match read.read(&mut byte) {
                Ok(1) => {
                    return Some(Token {
                        server: self,
                        byte: byte[0],
                    })
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // Empty (would block), closed, or broken: no token.
                _ => return None,
            }
        }
    }
}

impl Drop for Token<'_> {
    fn drop(&mut self) {
        let mut write = self.server.write.lock().unwrap_or_else(|e| e.into_inner());
        // The pipe has room for every token; should the write fail, the
        // build loses one job slot, which is all a client can do.
        let _ = write.write_all(&[self.byte]);
    }
}

/// The read and write ends named by the last `--jobserver-auth=` (or older
/// `--jobserver-fds=`) of `flags`: `R,W` file descriptors or `fifo:PATH`.
fn pipe_paths(flags: &str) -> Option<(PathBuf, PathBuf)> {
    let auth = flags
        .split_whitespace()
        .filter_map(|flag| {
            flag.strip_prefix("--jobserver-auth=")
                .or_else(|| flag.strip_prefix("--jobserver-fds="))
        })
        .next_back()?;
    if let Some(path) = auth.strip_prefix("fifo:") {
        return Some((PathBuf::from(path), PathBuf::from(path)));
    }
    let (read, write) = auth.split_once(',')?;
    let fd = |n: &str| {
        n.parse::<u32>()
            .ok()
            .map(|n| PathBuf::from(format!("/proc/self/fd/{n}")))
    };
    Some((fd(read)?, fd(write)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_name_the_pipe() {
        assert_eq!(
            pipe_paths("-j --jobserver-fds=6,7 --jobserver-auth=6,7"),
            Some(("/proc/self/fd/6".into(), "/proc/self/fd/7".into()))
        );
        assert_eq!(
            pipe_paths(" -j4 --jobserver-auth=fifo:/tmp/GMfifo8134"),
            Some(("/tmp/GMfifo8134".into(), "/tmp/GMfifo8134".into()))
        );
        assert_eq!(pipe_paths("-j4"), None);
        assert_eq!(pipe_paths("--jobserver-auth=x,7"), None);
    }

    /// A named pipe stands in for cargo's: tokens are taken while there are
    /// any, never waited for, and come back when dropped.
    #[test]
    fn tokens_are_taken_without_waiting_and_given_back() {
        let fifo = std::env::temp_dir().join(format!("tile-jobserver-{}", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        let server = Jobserver::open(&format!("-j3 --jobserver-auth=fifo:{}", fifo.display()))
            .expect("the fifo opens");
        server.write.lock().unwrap().write_all(b"+|").unwrap();
        let first = server.try_acquire().expect("a token");
        let second = server.try_acquire().expect("another token");
        assert_eq!((first.byte, second.byte), (b'+', b'|'));
        assert!(server.try_acquire().is_none(), "no third token");
        drop(second);
        let again = server.try_acquire().expect("the token given back");
        assert_eq!(again.byte, b'|');
        drop((first, again));
        let _ = std::fs::remove_file(&fifo);
    }

    #[test]
    fn a_descriptor_that_is_not_a_pipe_is_no_jobserver() {
        let file = std::env::temp_dir().join(format!("tile-not-a-pipe-{}", std::process::id()));
        std::fs::write(&file, b"++++").unwrap();
        assert!(Jobserver::open(&format!("--jobserver-auth=fifo:{}", file.display())).is_none());
        let _ = std::fs::remove_file(&file);
    }
}
