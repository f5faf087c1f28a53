//! Sections, includes, `[global]` inheritance and option dispatch.

use super::apply::{self, JobState};
use super::cmdline;
use super::cosmetic;
use super::engines;
use super::error::{Loc, ParseError};
use super::expand::Vars;
use super::lexer::{Kind, lex_line};
use super::spec::{Engine, Fallocate, JobSpec, OptionAt};
use super::suggest::suggest;
use super::table::{self, Class, Opt};
use super::{Accepted, JobFile, ParseEnv, Standing};

/// Deepest include nesting accepted.
const MAX_INCLUDE_DEPTH: usize = 32;

/// Most problems one parse lists; the rest are counted.
pub(crate) const MAX_LISTED_ERRORS: usize = 50;

/// An option line waiting for its section to be complete.
struct RawOpt {
    file: String,
    line: usize,
    key: String,
    value: Option<String>,
}

/// The section being read.
struct Section {
    name: String,
    global: bool,
    file: String,
    line: usize,
    opts: Vec<RawOpt>,
}

/// A typed option ready to apply.
struct Pending {
    /// Its place among the section's options.
    at: usize,
    opt: Opt,
    key: String,
    value: Option<String>,
    loc: Loc,
}

pub(crate) struct Parser<'e, 'a> {
    env: &'e ParseEnv<'a>,
    vars: Vars<'a>,
    global: JobState,
    global_opts: Vec<(String, String)>,
    global_at: Vec<OptionAt>,
    cur: Option<Section>,
    jobs: Vec<JobSpec>,
    accepted: Vec<Accepted>,
    /// Files being read, outermost first (include loop detection).
    stack: Vec<String>,
    /// Every problem found so far, in file order: the parse goes on past
    /// one, so a file with several gets them all at once, as fio lists
    /// them.
    errors: Vec<ParseError>,
    /// The refused `ioengine=` lines, listed before the other problems:
    /// an unsimulated engine is what blocks the job, and its options
    /// follow from it.
    engine_errors: Vec<ParseError>,
    /// Problems past [`MAX_LISTED_ERRORS`].
    omitted: usize,
    /// The unsimulated engine the `[global]` sections chose, if any, so a
    /// job's engine options are named as its.
    global_engine: Option<String>,
    /// The next job section starts a stonewall: the first job of every job
    /// file after the first, as fio runs several files one after another.
    stonewall_next: bool,
    /// Logs already read, by the file naming them, their name and how they
    /// are replayed, so sections sharing a `[global]` `read_iolog=` read
    /// it once.
    iologs: Vec<(
        (String, String, super::iolog::Replay),
        std::sync::Arc<super::iolog::IoLog>,
    )>,
}

impl<'e, 'a> Parser<'e, 'a> {
    pub(crate) fn new(env: &'e ParseEnv<'a>) -> Self {
        Parser {
            env,
            vars: Vars {
                mem_bytes: env.mem_bytes,
                ncpus: env.ncpus,
                pagesize: env.pagesize,
                vars: env.vars,
            },
            global: JobState::new(),
            global_opts: Vec::new(),
            global_at: Vec::new(),
            cur: None,
            jobs: Vec::new(),
            accepted: Vec::new(),
            stack: Vec::new(),
            errors: Vec::new(),
            engine_errors: Vec::new(),
            omitted: 0,
            global_engine: None,
            stonewall_next: false,
            iologs: Vec::new(),
        }
    }

    /// Starts the next job file. The first one keeps the `[global]`
    /// options the command line gave; every later one starts from fio's
    /// defaults and its first job waits for the jobs before it, as fio's
    /// `parse_options` does (`fill_def_thread` before each file after the
    /// first, and the stonewall it passes along).
    pub(crate) fn start_file(&mut self, later: bool) {
        self.flush();
        if later {
            self.global = JobState::new();
            self.global_opts.clear();
            self.global_at.clear();
            self.global_engine = None;
            self.stonewall_next = true;
        }
    }

    /// Reads job options given as command-line arguments, as fio's
    /// `parse_cmd_line` does: `--name=X` starts job `X` (`--name=global`, a
    /// `[global]` section), and the options before the first `--name` are
    /// `[global]`'s. An option's "line" is its argument's place (1-based); a
    /// first argument `fio`, the program's name in a pasted fio command
    /// line, is skipped (and counted). Arguments are split as
    /// [`cmdline::split`] splits them (`--key value` as `--key=value`); fio's
    /// own options that iolab acts on are left to the command.
    pub(crate) fn parse_args(&mut self, file: &str, args: &[String]) {
        self.flush();
        let first_problem = self.errors.len();
        for arg in cmdline::split(args) {
            let (line, key, value) = match arg {
                cmdline::Arg::Bad { line, key, message } => {
                    let e = self.loc(file, line).err(key.as_deref(), message);
                    self.report(e);
                    continue;
                }
                // The command acts on it (see `cmdline::own_options`).
                cmdline::Arg::Own { taken: true, .. } => continue,
                cmdline::Arg::Own { line, key, .. } => {
                    let msg = format!(
                        "--{key} is fio's own option, not a job's; iolab has no such option"
                    );
                    let e = self.loc(file, line).err(Some(&key), msg);
                    self.report(e);
                    continue;
                }
                cmdline::Arg::Job { line, key, value } => (line, key, value),
            };
            if let Some(c) = value
                .as_deref()
                .and_then(|v| v.chars().find(|c| c.is_control()))
            {
                let msg = format!("control character U+{:04X} in the value", u32::from(c));
                let e = self.loc(file, line).err(Some(&key), msg);
                self.report(e);
                continue;
            }
            if key == "name" {
                let name = value.as_deref().unwrap_or("").trim().to_string();
                if name.is_empty() {
                    let e = self
                        .loc(file, line)
                        .err(Some(&key), "--name needs a job name");
                    self.report(e);
                    continue;
                }
                let global = name.starts_with("global");
                self.open_section(name.clone(), file, line);
                if !global && let Some(sec) = self.cur.as_mut() {
                    // fio lists a command-line job's --name among its options.
                    sec.opts.push(RawOpt {
                        file: file.to_string(),
                        line,
                        key,
                        value: Some(name),
                    });
                }
                continue;
            }
            let sec = self.cur.get_or_insert_with(|| Section {
                name: "global".to_string(),
                global: true,
                file: file.to_string(),
                line,
                opts: Vec::new(),
            });
            sec.opts.push(RawOpt {
                file: file.to_string(),
                line,
                key,
                value,
            });
        }
        self.flush();
        // A malformed argument is found as it is read, a bad value when its
        // job is complete: list them in the arguments' order.
        self.errors[first_problem..].sort_by_key(|e| e.line);
    }

    /// Records a problem and goes on.
    fn report(&mut self, e: ParseError) {
        if self.has_room() {
            self.errors.push(e);
        }
    }

    /// Records a refused `ioengine=` line, listed ahead of the rest.
    fn report_engine(&mut self, e: ParseError) {
        if self.has_room() {
            self.engine_errors.push(e);
        }
    }

    /// Whether one more problem is listed; counts it as omitted if not.
    fn has_room(&mut self) -> bool {
        let room = self.errors.len() + self.engine_errors.len() < MAX_LISTED_ERRORS;
        if !room {
            self.omitted += 1;
        }
        room
    }

    fn loc(&self, file: &str, line: usize) -> Loc {
        Loc {
            file: file.to_string(),
            line,
            section: self.cur.as_ref().map(|s| s.name.clone()),
        }
    }

    /// Reads one file; `nested` for included files, which may not open
    /// sections.
    pub(crate) fn parse_text(&mut self, file: &str, text: &str, nested: bool) {
        self.stack.push(file.to_string());
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (idx, raw) in text.split('\n').enumerate() {
            let line = idx + 1;
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            let kind = match lex_line(raw, &self.vars) {
                Ok(Some(k)) => k,
                Ok(None) => continue,
                Err((opt, msg)) => {
                    let e = self.loc(file, line).err(opt.as_deref(), msg);
                    self.report(e);
                    continue;
                }
            };
            match kind {
                Kind::Section(name) => {
                    if nested {
                        let e = self
                            .loc(file, line)
                            .err(None, format!("section [{name}] in an included file"));
                        self.report(e);
                        continue;
                    }
                    self.open_section(name, file, line);
                }
                Kind::Include(target) => {
                    let loc = self.loc(file, line);
                    if self.cur.is_none() {
                        self.report(
                            loc.err(Some("include"), "option include outside of [] job section"),
                        );
                        continue;
                    }
                    if let Err(e) = self.include(&loc, &target) {
                        self.report(e);
                    }
                }
                Kind::Opt { key, value } => {
                    let Some(sec) = self.cur.as_mut() else {
                        let msg = format!("option {key} outside of [] job section");
                        let e = self.loc(file, line).err(Some(&key), msg);
                        self.report(e);
                        continue;
                    };
                    sec.opts.push(RawOpt {
                        file: file.to_string(),
                        line,
                        key,
                        value,
                    });
                }
            }
        }
        self.stack.pop();
    }

    /// Reads and parses the logs a job's `read_iolog=` names, through the
    /// environment's file reader (as an include is read, from the file that
    /// names the option); a log's bad line is named in the log.
    fn read_iologs(
        &mut self,
        spec: &JobSpec,
    ) -> Result<Vec<std::sync::Arc<super::iolog::IoLog>>, ParseError> {
        let (file, line) = spec.where_set("read_iolog");
        let loc = Loc {
            file: file.to_string(),
            line,
            section: Some(spec.section.clone()),
        };
        let n = spec.read_iolog.len();
        if n > 1 && n != spec.numjobs as usize {
            return Err(loc.err(
                Some("read_iolog"),
                format!("{n} logs for numjobs={}: fio gives each clone its own, so give one log or one per clone", spec.numjobs),
            ));
        }
        let mut logs = Vec::with_capacity(n);
        for name in &spec.read_iolog {
            let key = (file.to_string(), name.clone(), spec.replay.clone());
            if let Some((_, log)) = self.iologs.iter().find(|(k, _)| *k == key) {
                logs.push(log.clone());
                continue;
            }
            let (shown, bytes) = (self.env.include)(file, name).map_err(|e| {
                loc.err(
                    Some("read_iolog"),
                    format!("cannot read iolog '{name}': {e}"),
                )
            })?;
            let log = super::iolog::parse_log(&bytes, &spec.replay)
                .map(std::sync::Arc::new)
                .map_err(|e| {
                    Loc {
                        file: shown,
                        line: e.line,
                        section: Some(spec.section.clone()),
                    }
                    .err(Some("read_iolog"), e.message)
                })?;
            self.iologs.push((key, log.clone()));
            logs.push(log);
        }
        Ok(logs)
    }

    /// Ends the section being read and starts `[name]` at `file:line`; fio
    /// treats any section whose name starts with "global" as a global one.
    fn open_section(&mut self, name: String, file: &str, line: usize) {
        self.flush();
        self.cur = Some(Section {
            global: name.starts_with("global"),
            name,
            file: file.to_string(),
            line,
            opts: Vec::new(),
        });
    }

    /// Reads an included file; an error here is about the `include` line
    /// itself (the file's own problems are reported as they are met).
    fn include(&mut self, loc: &Loc, target: &str) -> Result<(), ParseError> {
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            return Err(loc.err(Some("include"), "includes nested too deeply"));
        }
        let from = self.stack.last().map_or("", String::as_str);
        let (display, bytes) = (self.env.include)(from, target)
            .map_err(|e| loc.err(Some("include"), format!("cannot include '{target}': {e}")))?;
        let contents = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            Loc {
                file: display.clone(),
                line,
                section: loc.section.clone(),
            }
            .err(
                Some("include"),
                format!("not a text file (invalid UTF-8 at byte {at})"),
            )
        })?;
        if self.stack.contains(&display) {
            let chain = self.stack.join(" -> ");
            return Err(loc.err(
                Some("include"),
                format!("include loop: {chain} -> {display}"),
            ));
        }
        self.parse_text(&display, &contents, true);
        Ok(())
    }

    /// `${VAR}`, then fio's keywords (and bc-style math on them).
    fn expand_value(&self, v: &str) -> Result<String, String> {
        let v = self.vars.expand_env(v)?;
        let v = self.vars.expand_keywords(&v)?;
        match v.chars().find(|c| c.is_control()) {
            Some(c) => Err(format!(
                "control character U+{:04X} in the expanded value",
                u32::from(c)
            )),
            None => Ok(v),
        }
    }

    /// The engine of the section being flushed: its own last `ioengine=`
    /// line (expanded), else the one `[global]` chose, else fio's default.
    fn section_engine(&self, sec: &Section) -> Option<String> {
        sec.opts
            .iter()
            .rev()
            .find(|o| table::lookup(&o.key).is_some_and(|e| e.canonical == "ioengine"))
            .and_then(|o| o.value.as_deref())
            .and_then(|v| self.expand_value(v).ok())
            .map(|v| v.trim().to_string())
    }

    /// Applies the finished current section, reporting each of its
    /// problems.
    fn flush(&mut self) {
        let Some(sec) = self.cur.take() else {
            return;
        };
        let mut state = self.global.clone();
        if !sec.global {
            // A `name=` in [global] does not rename jobs.
            state.name = None;
        }
        // The engine this section runs with, when iolab refuses it: its
        // own options are then named as its, not as unknown.
        let own = self.section_engine(&sec);
        let refused = match &own {
            Some(e) => apply::parse_engine(e).err().map(|_| e.clone()),
            None => self.global_engine.clone(),
        };
        let engine_now = refused
            .clone()
            .or(own)
            .unwrap_or_else(|| state.spec.ioengine.name().to_string());
        let mut written = Vec::with_capacity(sec.opts.len());
        let mut written_at = Vec::with_capacity(sec.opts.len());
        let mut pending = Vec::new();
        // The section's problems by the option's place in it, so those
        // found when the options are applied keep the file's order.
        let mut problems: Vec<(usize, ParseError)> = Vec::new();
        for (at, o) in sec.opts.into_iter().enumerate() {
            let loc = Loc {
                file: o.file,
                line: o.line,
                section: Some(sec.name.clone()),
            };
            let Some(entry) = table::lookup(&o.key) else {
                let e = unknown_option(&loc, &o.key, refused.as_deref(), &engine_now);
                problems.push((at, e));
                continue;
            };
            let value = match &o.value {
                Some(v) => match self.expand_value(v) {
                    Ok(v) => Some(v),
                    Err(m) => {
                        problems.push((at, loc.err(Some(&o.key), m)));
                        continue;
                    }
                },
                None => None,
            };
            if matches!(entry.class, Class::Typed(Opt::Ioengine)) {
                let name = value.as_deref().unwrap_or("").trim();
                if apply::parse_engine(name).is_err() {
                    self.report_engine(loc.err(Some(&o.key), engine_refusal(name)));
                    continue;
                }
            }
            match entry.class {
                Class::Typed(opt) => pending.push(Pending {
                    at,
                    opt,
                    key: o.key.clone(),
                    value: value.clone(),
                    loc: loc.clone(),
                }),
                Class::Cosmetic(why) | Class::Inert(why) => {
                    // Not simulated, but its value is fio's to check.
                    if let Err(m) =
                        cosmetic::check_value(cosmetic::check_of(entry.name), value.as_deref())
                    {
                        problems.push((at, loc.err(Some(&o.key), m)));
                        continue;
                    }
                    self.accepted.push(Accepted {
                        file: loc.file.clone(),
                        line: loc.line,
                        section: (!sec.global).then(|| sec.name.clone()),
                        option: o.key.clone(),
                        why: why.to_string(),
                        standing: if matches!(entry.class, Class::Inert(_)) {
                            Standing::Inert
                        } else {
                            Standing::NotSimulated
                        },
                    });
                }
                Class::Unsupported(ok, what) => {
                    if !table::is_harmless(ok, value.as_deref()) {
                        let msg = format!(
                            "option {} changes the simulated IO but is not implemented \
                             (iolab does not simulate {what})",
                            o.key
                        );
                        problems.push((at, loc.err(Some(&o.key), msg)));
                        continue;
                    }
                    self.accepted.push(Accepted {
                        file: loc.file.clone(),
                        line: loc.line,
                        section: (!sec.global).then(|| sec.name.clone()),
                        option: o.key.clone(),
                        why: format!(
                            "this value keeps fio's default; iolab does not simulate {what}"
                        ),
                        standing: Standing::Inert,
                    });
                }
            }
            written_at.push(OptionAt {
                option: entry.canonical.to_string(),
                file: loc.file.clone(),
                line: loc.line,
            });
            written.push((entry.canonical.to_string(), value.unwrap_or_default()));
        }
        // fio sorts a section's options by priority before applying them:
        // kb_base and unit_base first, so they govern the whole section.
        let first = |o: Opt| matches!(o, Opt::KbBase | Opt::UnitBase);
        for pass in [true, false] {
            for p in pending.iter().filter(|p| first(p.opt) == pass) {
                let at = (p.loc.file.as_str(), p.loc.line);
                if let Err(m) = state.apply(p.opt, p.value.as_deref(), at) {
                    problems.push((p.at, p.loc.err(Some(&p.key), m)));
                }
            }
        }
        problems.sort_by_key(|(at, _)| *at);
        for (_, e) in problems {
            self.report(e);
        }
        if sec.global {
            self.global = state;
            self.global_opts.extend(written);
            self.global_at.extend(written_at);
            self.global_engine = refused;
        } else {
            let mut options = self.global_opts.clone();
            options.extend(written);
            let mut option_at = self.global_at.clone();
            option_at.extend(written_at);
            self.note_overridden(&state, &sec.name);
            let global_count = self.global_opts.len();
            let mut spec = state.finish(&sec.name, &sec.file, sec.line, options);
            spec.option_at = option_at;
            spec.global_count = global_count;
            if !spec.read_iolog.is_empty() {
                match self.read_iologs(&spec) {
                    Ok(logs) => spec.replay_logs = logs,
                    Err(e) => self.report(e),
                }
            }
            if std::mem::take(&mut self.stonewall_next) {
                spec.stonewall = true;
            }
            self.as_fio_fixes(&mut spec);
            self.note_without_effect(&spec);
            self.jobs.push(spec);
        }
    }

    /// What fio's option checks (`fixup_options`) do to a finished job,
    /// done and said as fio does: `time_based` without a runtime is
    /// dropped with a note (fio: "time_based requires a runtime/timeout
    /// setting"); an `iodepth` above 1 on a synchronous engine is noted as
    /// capped at 1; `rate` and `rate_iops` for one direction are refused
    /// (fio: "rate and rate_iops are mutually exclusive").
    fn as_fio_fixes(&mut self, spec: &mut JobSpec) {
        let at = |option: &str| {
            spec.option_at
                .iter()
                .rev()
                .find(|a| a.option == option)
                .map(|a| (a.file.clone(), a.line))
        };
        let mut notes: Vec<(&str, String)> = Vec::new();
        // fio's add_job: a job without a file whose name is an existing
        // device (`[/dev/sdb]`) does its IO there, not on a file named
        // after it.
        if spec.filename.is_empty()
            && spec.nrfiles <= 1
            && spec.directory.is_empty()
            && spec.replay_logs.is_empty()
            && !matches!(spec.ioengine, super::Engine::Meta(_))
            && spec.name.starts_with("/dev/")
        {
            spec.filename.push(spec.name.clone());
            let (file, line) = (spec.file.clone(), spec.line);
            self.say_overridden_once(Accepted {
                file,
                line,
                section: Some(spec.section.clone()),
                option: "filename".to_owned(),
                why: format!(
                    "none given: the job's name {} is a device, which fio does its IO on, as \
                     its add_job does for a name that exists and is not a regular file",
                    spec.name
                ),
                standing: Standing::Overridden,
            });
        }
        if spec.time_based && spec.runtime_ns.unwrap_or(0) == 0 {
            spec.time_based = false;
            notes.push((
                "time_based",
                "has no effect without a runtime: the job ends when its IO is done, as fio runs it (fio: time_based requires a runtime/timeout setting)".to_string(),
            ));
        }
        if spec.iodepth > 1 && !spec.ioengine.is_async() {
            notes.push((
                "iodepth",
                format!(
                    "has no effect: ioengine={} is synchronous, so the queue depth is 1, as fio caps it",
                    spec.ioengine.name()
                ),
            ));
        }
        let strided = match spec.zonemode {
            Some(m) => m == super::ZoneMode::Strided,
            None => spec.zonesize > 0,
        };
        if !strided && spec.zonemode != Some(super::ZoneMode::Zbd) {
            for (option, v) in [("zonerange", spec.zonerange), ("zoneskip", spec.zoneskip)] {
                if v > 0 {
                    notes.push((
                        option,
                        "has no effect without zonemode=strided (or a zonesize), as in fio"
                            .to_owned(),
                    ));
                }
            }
        }
        if spec.zonemode == Some(super::ZoneMode::Zbd) && spec.zonerange > 0 {
            notes.push((
                "zonerange",
                "has no effect with zonemode=zbd, as in fio (the device's zones are zonesize)"
                    .to_owned(),
            ));
        }
        if spec.zonemode == Some(super::ZoneMode::Zbd)
            && spec.zonesize > 0
            && (spec.rw.mode.writes() || spec.rw.mode.trims())
        {
            let zs = spec.zonesize;
            let off = |v: Option<super::SizeSpec>| match v {
                Some(super::SizeSpec::Bytes(b)) => !b.is_multiple_of(zs),
                Some(super::SizeSpec::Percent(_)) => true,
                None => false,
            };
            let z = spec.zone_units;
            let size_off = z.size.is_none() && off(spec.size);
            let start_off = (z.offset.is_none() && off(spec.offset))
                || (z.offset_increment.is_none() && off(spec.offset_increment));
            if size_off || start_off {
                notes.push((
                    if start_off { "offset" } else { "size" },
                    "zonemode=zbd: a writing job's region is rounded to whole zones, its start \
                     up and its end down, as fio rounds it (its 'rounded up offset' and \
                     'rounded down io_size' lines)"
                        .to_owned(),
                ));
            }
        }
        if spec.submit_offload {
            notes.push((
                "io_submit_mode",
                "offload: a rated job sleeps to its next IO's time without waiting for its IOs \
                 in flight, as fio's submission threads let it (their own CPU is not simulated)"
                    .to_owned(),
            ));
        }
        if spec.fill_device {
            let size = if spec.size.is_some() || spec.filesize.is_some() {
                " (size= and filesize= give way to it, as in fio)"
            } else {
                ""
            };
            notes.push((
                "fill_device",
                format!(
                    "the job's files take the simulated device's free space{size}, and the job \
                     ends when it is full, as fio's ends at ENOSPC (so a verify's read-back \
                     never starts)"
                ),
            ));
        }
        if spec.verifies() {
            let option = if spec.verify.is_some() {
                "verify"
            } else {
                "verify_pattern"
            };
            let writes = spec.rw.mode.writes();
            let why = if writes && spec.do_verify && spec.time_based && spec.verify_backlog == 0 {
                "the writes take all of the runtime, so the read-back never starts (as fio \
                 warns); the data's contents are not simulated"
                    .to_owned()
            } else if writes && spec.do_verify {
                let backlog = match spec.verify_backlog {
                    0 => String::new(),
                    n => format!(", and every {n} written blocks as it goes (verify_backlog)"),
                };
                format!(
                    "the job reads back what it wrote once its writes are done{backlog}, as \
                     fio's verify does; the data's contents are not simulated (nothing is \
                     checksummed or compared)"
                )
            } else if writes {
                "do_verify=0: no read-back phase; the data's contents are not simulated".to_owned()
            } else {
                "fio checks each read's data as it completes, which adds no IO; the data's \
                 contents are not simulated"
                    .to_owned()
            };
            notes.push((option, why));
        }
        if spec.ioengine == super::Engine::Sg && spec.sg_write_mode != super::SgWriteMode::Write {
            let why = match spec.sg_write_mode {
                super::SgWriteMode::Verify => {
                    "SCSI VERIFY: simulated as the device's read of each block, counted as a \
                     write as fio counts it (no data is compared)"
                }
                super::SgWriteMode::WriteSame => {
                    "SCSI WRITE SAME: simulated as a write of each block (the one block the \
                     command carries is not simulated apart)"
                }
                super::SgWriteMode::WriteAndVerify => {
                    "SCSI WRITE AND VERIFY: simulated as a write (the device's compare is not \
                     simulated)"
                }
                _ => "SCSI WRITE STREAM: simulated as a write",
            };
            notes.push(("sg_write_mode", why.to_owned()));
        }
        if spec.on_null_device() {
            notes.push((
                "filename",
                format!(
                    "{}: the kernel's {} device completes each read and write in the call, no \
                     device behind it: each IO is the call's time (0.6 µs, fio's psync on it \
                     here), whatever the device",
                    spec.filename.join(":"),
                    if spec.filename.iter().all(|f| f == "/dev/null") {
                        "null"
                    } else {
                        "null or zero"
                    }
                ),
            ));
        }
        if spec.flow.weight > i32::MAX as u32 {
            notes.push((
                "flow",
                format!(
                    "a negative weight: fio 3.33 keeps it in an unsigned int, {}, and so does \
                     iolab (with flow=2 beside it the flow's total wraps to 0 and neither job is \
                     held back, as fio 3.33 runs fio's butterfly.fio)",
                    spec.flow.weight
                ),
            ));
        }
        if spec.ioengine != super::Engine::E4defrag {
            for (option, set) in [
                ("donorname", spec.donorname.is_some()),
                ("inplace", spec.inplace),
            ] {
                if set {
                    notes.push((
                        option,
                        format!(
                            "an option of ioengine e4defrag; this job's ioengine {} does not use it",
                            spec.ioengine.name()
                        ),
                    ));
                }
            }
        }
        if let Some(why) = spec.ioengine.stands_in() {
            notes.push((
                "ioengine",
                format!("ioengine={}: {why}", spec.ioengine.name()),
            ));
        }
        if let Some(named) = spec.rw.engine_value {
            let v = named.name();
            if spec.ioengine == super::Engine::Meta(named) {
                notes.push((
                    "rw",
                    format!(
                        "rw={v}: fio 3.33 refuses this value, which fio's example files for the \
                         {v} engine carry; iolab takes it as what it says, the engine's own calls, \
                         counted as reads"
                    ),
                ));
            } else if let Some((file, line)) = at("rw") {
                let e = self.loc(&file, line).err(
                    Some("rw"),
                    format!(
                        "rw={v} names the {v} engine, and the job's is ioengine={}: give \
                         ioengine={v} (fio 3.33 refuses rw={v} whatever the engine)",
                        spec.ioengine.name()
                    ),
                );
                self.report(e);
            }
        }
        for (option, why) in notes {
            if let Some((file, line)) = at(option) {
                self.say_overridden_once(Accepted {
                    file,
                    line,
                    section: Some(spec.section.clone()),
                    option: option.to_string(),
                    why,
                    standing: Standing::Overridden,
                });
            }
        }
        if (0..3).any(|d| spec.rate[d] > 0 && spec.rate_iops[d] > 0)
            && let Some((file, line)) = at("rate_iops").or_else(|| at("rate"))
        {
            let e = self.loc(&file, line).err(
                Some("rate_iops"),
                "rate and rate_iops are mutually exclusive, as fio says: give one of them",
            );
            self.report(e);
        }
    }

    /// Says the options of a finished job that fio takes and then does
    /// nothing with in it, so none is dropped unsaid: a
    /// `random_distribution` of a sequential job, the `replay_*` options
    /// of a job without `read_iolog`; and the values fio acts on that the
    /// simulation does not follow (`create_fsync=0`, a sparse `fallocate`,
    /// `unit_base=1`, a metadata engine's `openfiles`).
    fn note_without_effect(&mut self, spec: &JobSpec) {
        const REPLAY: [&str; 5] = [
            "replay_no_stall",
            "replay_time_scale",
            "replay_redirect",
            "replay_scale",
            "replay_align",
        ];
        let mut idle: Vec<(&str, &str)> = Vec::new();
        if !spec.random_distribution.is_uniform() && !spec.rw.mode.is_random() {
            idle.push((
                "random_distribution",
                "has no effect: the job's offsets are sequential, and fio draws them only for random ones",
            ));
        }
        if spec.read_iolog.is_empty() {
            for o in REPLAY {
                idle.push((
                    o,
                    "has no effect: the job replays no log (read_iolog), as in fio",
                ));
            }
        }
        // Values fio acts on that the simulation does not follow.
        let mut unsimulated: Vec<(&str, &str)> = Vec::new();
        if !spec.create_fsync {
            unsimulated.push((
                "create_fsync",
                "the files a job lays out start written back, as after fio's create_fsync=1",
            ));
        }
        if matches!(spec.fallocate, Fallocate::None | Fallocate::Truncate) {
            unsimulated.push((
                "fallocate",
                "a file fio leaves sparse is unwritten space here, as a preallocated one",
            ));
        }
        if spec.unit_base == 1 {
            unsimulated.push(("unit_base", "iolab's normal output gives bytes, not bits"));
        }
        if matches!(spec.ioengine, Engine::Meta(_)) && spec.openfiles.is_some() {
            unsimulated.push((
                "openfiles",
                "a metadata engine handles one file at a time here whatever the limit; \
                 fio's own CPU walking its files on each call is not simulated",
            ));
        }
        let notes = idle
            .into_iter()
            .map(|(o, w)| (o, w, Standing::Overridden))
            .chain(
                unsimulated
                    .into_iter()
                    .map(|(o, w)| (o, w, Standing::NotSimulated)),
            );
        for (option, why, standing) in notes {
            let Some(at) = spec.option_at.iter().rev().find(|a| a.option == option) else {
                continue;
            };
            let dup = self
                .accepted
                .iter()
                .any(|a| a.file == at.file && a.line == at.line && a.standing == standing);
            if !dup {
                self.accepted.push(Accepted {
                    file: at.file.clone(),
                    line: at.line,
                    section: Some(spec.section.clone()),
                    option: option.to_string(),
                    why: why.to_string(),
                    standing,
                });
            }
        }
    }

    /// Lists, once each, the block-size options of a job that fio would
    /// override with another (see [`JobState::superseded`]).
    fn note_overridden(&mut self, state: &apply::JobState, section: &str) {
        for o in state.superseded() {
            let why = format!(
                "has no effect on the {}: {} ({}:{}) decides their block sizes, as in fio",
                o.dirs.join(" and "),
                o.by,
                o.by_at.0,
                o.by_at.1
            );
            self.say_overridden_once(Accepted {
                file: o.at.0,
                line: o.at.1,
                section: Some(section.to_string()),
                option: o.option.to_string(),
                why,
                standing: Standing::Overridden,
            });
        }
    }

    /// Lists `note` (an overridden option) unless the same line already
    /// says the same: an option of `[global]` is said once, not once a
    /// job.
    fn say_overridden_once(&mut self, note: Accepted) {
        let said = self.accepted.iter().any(|a| {
            a.standing == Standing::Overridden
                && a.file == note.file
                && a.line == note.line
                && a.why == note.why
        });
        if !said {
            self.accepted.push(note);
        }
    }

    /// Ends the parse of the top-level file `file` with `lines` lines:
    /// the jobs, or every problem found, refused engines first.
    pub(crate) fn finish(mut self, file: &str, lines: usize) -> Result<JobFile, ParseError> {
        self.flush();
        let mut all = std::mem::take(&mut self.engine_errors);
        all.append(&mut self.errors);
        if all.is_empty() && self.jobs.is_empty() {
            all.push(self.loc(file, lines.max(1)).err(None, "no jobs defined"));
        }
        let mut all = all.into_iter();
        if let Some(mut first) = all.next() {
            first.more = all.collect();
            first.omitted = self.omitted;
            return Err(first);
        }
        Ok(JobFile {
            jobs: self.jobs,
            accepted: self.accepted,
            global_options: self.global_opts,
        })
    }
}

/// The problem with an option name the general table does not know: an
/// option of one of fio's other engines, or a name fio does not know
/// either. `refused` is the section's engine when iolab refuses it,
/// `engine` the engine it runs with.
fn unknown_option(loc: &Loc, key: &str, refused: Option<&str>, engine: &str) -> ParseError {
    let owners: Vec<&str> = engines::owners(key).collect();
    if let Some(e) = refused.filter(|e| owners.contains(e)) {
        return loc.err(
            Some(key),
            format!("an option of ioengine {e}, which iolab does not simulate"),
        );
    }
    if !owners.is_empty() {
        return loc.err(
            Some(key),
            format!(
                "Bad option <{key}>: an option of fio's ioengine {}, and this job's ioengine \
                 is {engine}",
                owners.join(" or ")
            ),
        );
    }
    let mut e = loc.err(Some(key), format!("Bad option <{key}>"));
    e.suggestion = suggest(key).map(str::to_string);
    e
}

/// Why `ioengine=NAME` is refused.
fn engine_refusal(name: &str) -> String {
    if name.is_empty() {
        format!(
            "ioengine needs an engine's name (iolab simulates {})",
            engines::SIMULATED
        )
    } else if engines::is_fio_engine(name) {
        format!(
            "ioengine {name} is not simulated; iolab simulates {}",
            engines::SIMULATED
        )
    } else {
        let near = super::suggest::closest(name, engines::all_names())
            .map(|c| format!(" (did you mean '{c}'?)"))
            .unwrap_or_default();
        format!(
            "ioengine {name} is not one of fio's engines{near}; iolab simulates {}",
            engines::SIMULATED
        )
    }
}
