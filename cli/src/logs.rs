//! fio's log files of a run (`write_bw_log`, `write_iops_log`,
//! `write_lat_log`, averaged over `log_avg_msec` windows; `write_hist_log`
//! every `log_hist_msec`) and named as fio
//! names them: relative to the current directory for one run, or under
//! `--log-dir`, one directory per run of a comparison or of `--seeds`
//! (`N`, `N.SEED` or `SEED`, the suffixes `--trace` puts on its files).
//! The lines are [`iolab_sim::stats::write_log`]'s.

use std::path::{Path, PathBuf};

use iolab_sim::RunOutput;
use iolab_sim::fio::JobSpec;
use iolab_sim::stats::{LogKind, log_file_name, write_log};

use crate::Failure;

/// One log file a job asks for.
struct Wanted {
    /// Index of the job's series (clones counted), 0-based.
    job: usize,
    /// fio's job number (`PREFIX_bw.N.log`), or none under
    /// `per_job_logs=0`.
    number: Option<usize>,
    prefix: String,
    kind: LogKind,
    /// `log_offset=1`: the offset column.
    offset: bool,
    /// `file:line: option` of the asking option, for messages.
    origin: String,
}

/// The logs of a command's jobs, and where its runs put them.
pub struct Logs {
    wanted: Vec<Wanted>,
    jobs: usize,
    base: Option<PathBuf>,
}

impl Logs {
    /// The logs `jobs` ask for; `notes` gets what the user should know
    /// about them (a log iolab does not write, a window iolab chose).
    pub fn plan(jobs: &[JobSpec], log_dir: Option<&str>, notes: &mut Vec<String>) -> Logs {
        let mut wanted = Vec::new();
        let mut index = 0;
        for spec in jobs {
            let asks = [
                ("write_bw_log", &spec.logs.bw, &[LogKind::Bw][..]),
                ("write_iops_log", &spec.logs.iops, &[LogKind::Iops][..]),
                (
                    "write_lat_log",
                    &spec.logs.lat,
                    &[LogKind::Lat, LogKind::Clat, LogKind::Slat][..],
                ),
                ("write_hist_log", &spec.logs.hist, &[LogKind::Hist][..]),
            ];
            for (option, prefix, kinds) in asks {
                let Some(prefix) = prefix else { continue };
                let prefix = if prefix.is_empty() {
                    spec.name.clone()
                } else {
                    prefix.clone()
                };
                let (file, line) = spec.where_set(option);
                let origin = format!("{file}:{line}: {option}");
                // One note per line of the job file: a [global] option
                // that every job inherits is said once.
                let mut note = |n: String| {
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                };
                if option == "write_hist_log" && spec.logs.hist_msec == 0 {
                    note(format!(
                        "iolab: {origin}: log_hist_msec is 0: the {prefix}_clat_hist log is \
                         written empty, as fio writes it"
                    ));
                }
                if spec.log_avg_msec == 0 && option != "write_hist_log" {
                    note(format!(
                        "iolab: {origin}: log_avg_msec is 0, where fio logs every IO; \
                         iolab logs {} ms averages",
                        iolab_sim::DEFAULT_LOG_WINDOW_MS
                    ));
                }
                if option == "write_lat_log" && !spec.ioengine.is_async() {
                    note(format!(
                        "iolab: {origin}: ioengine={} is synchronous: no submission latency, \
                         so its {prefix}_slat log is empty, as fio's is",
                        spec.ioengine.name()
                    ));
                }
                for clone in 0..spec.numjobs as usize {
                    for &kind in kinds {
                        wanted.push(Wanted {
                            job: index + clone,
                            number: spec.logs.per_job.then_some(index + clone + 1),
                            prefix: prefix.clone(),
                            kind,
                            offset: spec.logs.offset,
                            origin: origin.clone(),
                        });
                    }
                }
            }
            index += spec.numjobs as usize;
        }
        Logs {
            wanted,
            jobs: index,
            base: log_dir.map(PathBuf::from),
        }
    }

    /// Whether any job asks for a log.
    pub fn any(&self) -> bool {
        !self.wanted.is_empty()
    }

    /// The directory of a run whose `--trace` suffix is `suffix` (empty
    /// for a command of one run), made if under `--log-dir`. Refused
    /// before any run: several runs without `--log-dir`, an absolute prefix
    /// under it, a prefix whose directory does not exist.
    pub fn prepare(
        &self,
        suffix: &str,
        claims: &mut crate::outputs::Claims,
    ) -> Result<PathBuf, Failure> {
        let sub = suffix.trim_start_matches('.');
        let dir = match (&self.base, sub.is_empty()) {
            (None, true) => PathBuf::new(),
            (None, false) => {
                let w = &self.wanted[0];
                return Err(Failure::input(format!(
                    "{}: a comparison or a run of several seeds writes one set of logs \
                     per run; give --log-dir DIR (each run's logs go in DIR/N, DIR/N.SEED \
                     or DIR/SEED)",
                    w.origin
                )));
            }
            (Some(base), _) => {
                let dir = base.join(sub);
                std::fs::create_dir_all(&dir)
                    .map_err(|e| Failure::input(format!("--log-dir {}: {e}", dir.display())))?;
                dir
            }
        };
        let mut claimed: Vec<PathBuf> = Vec::new();
        for w in &self.wanted {
            if self.base.is_some() && Path::new(&w.prefix).is_absolute() {
                return Err(Failure::input(format!(
                    "{}: the prefix {} is absolute; under --log-dir it must be relative",
                    w.origin, w.prefix
                )));
            }
            let path = dir.join(log_file_name(&w.prefix, w.kind, w.number));
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            if let Some(p) = parent
                && !p.is_dir()
            {
                return Err(Failure::input(format!(
                    "{}: {} is not a directory (fio does not make one either)",
                    w.origin,
                    p.display()
                )));
            }
            if path.is_dir() {
                return Err(Failure::input(format!(
                    "{}: {} is a directory",
                    w.origin,
                    path.display()
                )));
            }
            // Several jobs may share one file (per_job_logs=0).
            if !claimed.contains(&path) {
                claims.file(&w.origin, &path)?;
                claimed.push(path);
            }
        }
        Ok(dir)
    }

    /// Writes one run's logs in `dir` (from [`Logs::prepare`]); returns
    /// how many files it wrote.
    pub fn write(&self, dir: &Path, out: &RunOutput) -> Result<usize, Failure> {
        let series = &out.report.series;
        if series.len() != self.jobs {
            return Err(Failure {
                code: 1,
                message: format!(
                    "log files: the run has {} job series where the job file has {} jobs",
                    series.len(),
                    self.jobs
                ),
            });
        }
        // Files in first-asked order; a shared file (`per_job_logs=0`)
        // takes its jobs' lines in job order.
        let mut files: Vec<(PathBuf, String)> = Vec::new();
        for w in &self.wanted {
            let path = dir.join(log_file_name(&w.prefix, w.kind, w.number));
            let at = match files.iter().position(|(p, _)| *p == path) {
                Some(i) => i,
                None => {
                    files.push((path, String::new()));
                    files.len() - 1
                }
            };
            write_log(&mut files[at].1, &series[w.job], w.kind, w.offset);
        }
        for (path, text) in &files {
            crate::outputs::write_atomic(path, text.as_bytes())
                .map_err(|message| Failure { code: 1, message })?;
        }
        Ok(files.len())
    }
}
