//! Sections, includes, `[global]` inheritance and option dispatch.

use super::apply::JobState;
use super::cosmetic;
use super::error::{Loc, ParseError};
use super::expand::Vars;
use super::lexer::{Kind, lex_line};
use super::spec::{JobSpec, OptionAt};
use super::suggest::suggest;
use super::table::{self, Class, Opt};
use super::{Accepted, JobFile, ParseEnv, Standing};

/// Deepest include nesting accepted.
const MAX_INCLUDE_DEPTH: usize = 32;

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
        }
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
    pub(crate) fn parse_text(
        &mut self,
        file: &str,
        text: &str,
        nested: bool,
    ) -> Result<(), ParseError> {
        self.stack.push(file.to_string());
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (idx, raw) in text.split('\n').enumerate() {
            let line = idx + 1;
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            let kind = match lex_line(raw, &self.vars) {
                Ok(Some(k)) => k,
                Ok(None) => continue,
                Err((opt, msg)) => return Err(self.loc(file, line).err(opt.as_deref(), msg)),
            };
            match kind {
                Kind::Section(name) => {
                    if nested {
                        return Err(self
                            .loc(file, line)
                            .err(None, format!("section [{name}] in an included file")));
                    }
                    self.flush()?;
                    self.cur = Some(Section {
                        // fio treats any section whose name starts with
                        // "global" as a global section.
                        global: name.starts_with("global"),
                        name,
                        file: file.to_string(),
                        line,
                        opts: Vec::new(),
                    });
                }
                Kind::Include(target) => {
                    let loc = self.loc(file, line);
                    if self.cur.is_none() {
                        return Err(
                            loc.err(Some("include"), "option include outside of [] job section")
                        );
                    }
                    self.include(&loc, &target)?;
                }
                Kind::Opt { key, value } => {
                    let Some(sec) = self.cur.as_mut() else {
                        let msg = format!("option {key} outside of [] job section");
                        return Err(self.loc(file, line).err(Some(&key), msg));
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
        Ok(())
    }

    fn include(&mut self, loc: &Loc, target: &str) -> Result<(), ParseError> {
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            return Err(loc.err(Some("include"), "includes nested too deeply"));
        }
        let (display, contents) = (self.env.include)(target)
            .map_err(|e| loc.err(Some("include"), format!("cannot include '{target}': {e}")))?;
        if self.stack.contains(&display) {
            let chain = self.stack.join(" -> ");
            return Err(loc.err(
                Some("include"),
                format!("include loop: {chain} -> {display}"),
            ));
        }
        self.parse_text(&display, &contents, true)
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

    /// Applies the finished current section.
    fn flush(&mut self) -> Result<(), ParseError> {
        let Some(sec) = self.cur.take() else {
            return Ok(());
        };
        let mut state = self.global.clone();
        if !sec.global {
            // A `name=` in [global] does not rename jobs.
            state.name = None;
        }
        let mut written = Vec::with_capacity(sec.opts.len());
        let mut written_at = Vec::with_capacity(sec.opts.len());
        let mut pending = Vec::new();
        for o in sec.opts {
            let loc = Loc {
                file: o.file,
                line: o.line,
                section: Some(sec.name.clone()),
            };
            let Some(entry) = table::lookup(&o.key) else {
                let mut e = loc.err(Some(&o.key), format!("Bad option <{}>", o.key));
                e.suggestion = suggest(&o.key).map(str::to_string);
                return Err(e);
            };
            let value = match &o.value {
                Some(v) => Some(self.expand_value(v).map_err(|m| loc.err(Some(&o.key), m))?),
                None => None,
            };
            match entry.class {
                Class::Typed(opt) => pending.push(Pending {
                    opt,
                    key: o.key.clone(),
                    value: value.clone(),
                    loc: loc.clone(),
                }),
                Class::Cosmetic(why) | Class::Inert(why) => {
                    // Not simulated, but its value is fio's to check.
                    cosmetic::check_value(cosmetic::check_of(entry.name), value.as_deref())
                        .map_err(|m| loc.err(Some(&o.key), m))?;
                    self.accepted.push(Accepted {
                        file: loc.file.clone(),
                        line: loc.line,
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
                        return Err(loc.err(Some(&o.key), msg));
                    }
                    self.accepted.push(Accepted {
                        file: loc.file.clone(),
                        line: loc.line,
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
                state
                    .apply(p.opt, p.value.as_deref())
                    .map_err(|m| p.loc.err(Some(&p.key), m))?;
            }
        }
        if sec.global {
            self.global = state;
            self.global_opts.extend(written);
            self.global_at.extend(written_at);
        } else {
            let mut options = self.global_opts.clone();
            options.extend(written);
            let mut option_at = self.global_at.clone();
            option_at.extend(written_at);
            let mut spec = state.finish(&sec.name, &sec.file, sec.line, options);
            spec.option_at = option_at;
            self.jobs.push(spec);
        }
        Ok(())
    }

    /// Ends the parse of the top-level file `file` with `lines` lines.
    pub(crate) fn finish(mut self, file: &str, lines: usize) -> Result<JobFile, ParseError> {
        self.flush()?;
        if self.jobs.is_empty() {
            return Err(self.loc(file, lines.max(1)).err(None, "no jobs defined"));
        }
        Ok(JobFile {
            jobs: self.jobs,
            accepted: self.accepted,
            global_options: self.global_opts,
        })
    }
}
