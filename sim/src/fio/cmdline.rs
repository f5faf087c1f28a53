//! fio's command line split into options, as fio's `getopt_long_only`
//! splits it: `--key=value`, or `--key value` when the option takes a
//! value (every job option but fio's flags, and fio's own options that
//! take one), `--key` alone for a flag. A single dash works as two.
//!
//! fio's own options (`--output`, `--minimal`, ...) are not a job's: the
//! ones iolab acts on are handed to the command ([`own_options`]), the
//! others refused by the parser.

use super::table;

/// How one of fio's own options takes its value (`has_arg` in fio's
/// `l_opts`, `init.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// `--key value` or `--key=value`.
    Value,
    /// Only `--key=value`; `--key` alone is the option without one.
    Optional,
    /// `--key` alone.
    Nothing,
}

/// fio's own options: name, how it takes a value, whether iolab acts on it
/// (the command does, see [`own_options`]).
const OWN: [(&str, Takes, bool); 40] = [
    ("output", Takes::Value, true),
    ("latency-log", Takes::Nothing, false),
    ("bandwidth-log", Takes::Nothing, false),
    ("minimal", Takes::Nothing, true),
    ("output-format", Takes::Value, true),
    ("append-terse", Takes::Optional, true),
    ("version", Takes::Nothing, false),
    ("help", Takes::Nothing, false),
    ("cmdhelp", Takes::Optional, false),
    ("enghelp", Takes::Optional, false),
    ("showcmd", Takes::Nothing, false),
    ("readonly", Takes::Nothing, false),
    ("eta", Takes::Value, true),
    ("eta-interval", Takes::Value, true),
    ("eta-newline", Takes::Value, true),
    ("debug", Takes::Value, false),
    ("parse-only", Takes::Nothing, true),
    ("section", Takes::Value, true),
    ("inflate-log", Takes::Value, false),
    ("alloc-size", Takes::Value, false),
    ("profile", Takes::Value, false),
    ("warnings-fatal", Takes::Nothing, false),
    ("max-jobs", Takes::Value, false),
    ("terse-version", Takes::Value, true),
    ("server", Takes::Optional, false),
    ("server-internal", Takes::Value, false),
    ("daemonize", Takes::Value, false),
    ("client", Takes::Value, false),
    ("remote-config", Takes::Value, false),
    ("cpuclock-test", Takes::Nothing, false),
    ("crctest", Takes::Optional, false),
    ("memcpytest", Takes::Optional, false),
    ("idle-prof", Takes::Value, false),
    ("status-interval", Takes::Value, true),
    ("trigger-file", Takes::Value, false),
    ("trigger-timeout", Takes::Value, false),
    ("trigger", Takes::Value, false),
    ("trigger-remote", Takes::Value, false),
    ("aux-path", Takes::Value, false),
    ("merge-blktrace-only", Takes::Nothing, false),
];

/// Job options fio's command line takes as flags, without a value (its
/// `FIO_OPT_STR_SET` options, the engines' included; found by giving each
/// of fio 3.33's options alone before another `--name`): every other job
/// option takes the next argument as its value when it has no `=`.
const JOB_FLAGS: [&str; 18] = [
    "bs_unaligned",
    "exitall",
    "exitall_on_error",
    "fixedbufs",
    "group_reporting",
    "hipri",
    "new_group",
    "norandommap",
    "refill_buffers",
    "registerfiles",
    "sqthread_poll",
    "stonewall",
    "thread",
    "time_based",
    "userspace_reap",
    "verify_only",
    "wait_for_previous",
    "zero_buffers",
];

/// One of fio's own options given among the job options, for the command
/// to act on: `--output`, `--output-format`, `--minimal`, `--append-terse`,
/// `--terse-version`, `--section`, `--parse-only`, `--eta`, `--eta-interval`,
/// `--eta-newline`, `--status-interval`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnOption {
    /// The argument's place (1-based), as the parser numbers them.
    pub line: usize,
    /// The name without dashes.
    pub key: String,
    pub value: Option<String>,
}

/// One option of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arg {
    /// A job option (or a name the parser will find unknown).
    Job {
        line: usize,
        key: String,
        value: Option<String>,
    },
    /// One of fio's own options; `taken` when iolab acts on it.
    Own {
        line: usize,
        key: String,
        value: Option<String>,
        taken: bool,
    },
    /// Not an option: the message says why; `key` when it names one.
    Bad {
        line: usize,
        key: Option<String>,
        message: String,
    },
}

/// Splits `args` (a first `fio`, the program's name, skipped and counted).
pub(crate) fn split(args: &[String]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut idx = 0;
    while idx < args.len() {
        let arg = &args[idx];
        let line = idx + 1;
        idx += 1;
        if line == 1 && arg == "fio" {
            continue;
        }
        let Some(body) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            out.push(Arg::Bad {
                line,
                key: None,
                message: format!("'{arg}' is not a job option (--option=value)"),
            });
            continue;
        };
        let (key, mut value) = match body.split_once('=') {
            Some((k, v)) => (k.trim().to_owned(), Some(v.to_owned())),
            None => (body.trim().to_owned(), None),
        };
        if key.is_empty() {
            out.push(Arg::Bad {
                line,
                key: None,
                message: format!("'{arg}' names no option"),
            });
            continue;
        }
        let own = OWN.iter().find(|(n, _, _)| *n == key);
        let takes_next = match own {
            Some((_, takes, _)) => *takes == Takes::Value,
            None => table::lookup(&key).is_some() && !JOB_FLAGS.contains(&key.as_str()),
        };
        if value.is_none() && takes_next {
            match args.get(idx) {
                Some(next) => {
                    value = Some(next.clone());
                    idx += 1;
                }
                None => {
                    out.push(Arg::Bad {
                        line,
                        key: Some(key.clone()),
                        message: format!("--{key} needs a value (--{key}=VALUE, or --{key} VALUE)"),
                    });
                    continue;
                }
            }
        }
        out.push(match own {
            Some((_, _, taken)) => Arg::Own {
                line,
                key,
                value,
                taken: *taken,
            },
            None => Arg::Job { line, key, value },
        });
    }
    out
}

/// fio's own options among `args` that iolab acts on, in order (see
/// [`OwnOption`]); the job options and everything else are the parser's.
pub fn own_options(args: &[String]) -> Vec<OwnOption> {
    split(args)
        .into_iter()
        .filter_map(|a| match a {
            Arg::Own {
                line,
                key,
                value,
                taken: true,
            } => Some(OwnOption { line, key, value }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn a_value_may_be_the_next_argument_and_a_flag_takes_none() {
        let a = split(&args("fio --name x --rw randread --time_based --size=1m"));
        assert_eq!(
            a,
            vec![
                Arg::Job {
                    line: 2,
                    key: "name".into(),
                    value: Some("x".into())
                },
                Arg::Job {
                    line: 4,
                    key: "rw".into(),
                    value: Some("randread".into())
                },
                Arg::Job {
                    line: 6,
                    key: "time_based".into(),
                    value: None
                },
                Arg::Job {
                    line: 7,
                    key: "size".into(),
                    value: Some("1m".into())
                },
            ]
        );
    }

    #[test]
    fn an_option_taking_a_value_takes_the_next_argument_whatever_it_is() {
        // fio's getopt does the same: `--direct --size=1m` gives direct
        // the value "--size=1m" (fio: "failed parsing direct=--size=1m").
        let a = split(&args("--direct --size=1m"));
        assert_eq!(
            a,
            vec![Arg::Job {
                line: 1,
                key: "direct".into(),
                value: Some("--size=1m".into())
            }]
        );
        let a = split(&args("--name=x --iodepth"));
        assert!(matches!(&a[1], Arg::Bad { key: Some(k), message, .. }
            if k == "iodepth" && message.contains("needs a value")));
    }

    #[test]
    fn own_options_are_handed_over_with_their_values() {
        let a = args("--minimal --name=x --eta never --output-format=json,normal --parse-only");
        let own = own_options(&a);
        let keys: Vec<(&str, Option<&str>)> = own
            .iter()
            .map(|o| (o.key.as_str(), o.value.as_deref()))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("minimal", None),
                ("eta", Some("never")),
                ("output-format", Some("json,normal")),
                ("parse-only", None),
            ]
        );
        // One iolab does not act on is the parser's to refuse, its value
        // consumed so the next argument is read as what it is.
        let s = split(&args("--debug io --name=x"));
        assert!(
            matches!(&s[0], Arg::Own { key, taken: false, value: Some(v), .. }
            if key == "debug" && v == "io")
        );
        assert!(matches!(&s[1], Arg::Job { key, .. } if key == "name"));
    }
}
