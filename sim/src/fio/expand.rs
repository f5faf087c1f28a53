//! Value expansion: mmtests' `$((...))`, fio's `${VAR}`, the fio keywords
//! `$mb_memory`/`$ncpus`/`$pagesize`, and the integer expression evaluator
//! shared by `$((...))` and fio's parenthesised arithmetic.
//!
//! All arithmetic is checked `i64`: overflow and division by zero are errors,
//! never wrap-around or panics.

use std::collections::BTreeMap;

/// Deepest expression nesting accepted (guards the recursive evaluator).
const MAX_DEPTH: usize = 64;

/// Names and values the expansions can see.
pub(crate) struct Vars<'a> {
    pub(crate) mem_bytes: u64,
    pub(crate) ncpus: u32,
    pub(crate) pagesize: u64,
    pub(crate) vars: &'a BTreeMap<String, String>,
}

/// Operator set and operand reader of one expression flavour.
pub(crate) struct Dialect<'a> {
    /// Exponentiation operator: `**` (bash) or `^` (fio, bc).
    pub(crate) pow: &'static str,
    /// Turns an operand word (number, variable, number with unit) into a value.
    pub(crate) word: &'a dyn Fn(&str) -> Result<i64, String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Open,
    Close,
}

fn is_op_char(c: char) -> bool {
    matches!(
        c,
        '+' | '-'
            | '*'
            | '/'
            | '%'
            | '^'
            | '('
            | ')'
            | '<'
            | '>'
            | '='
            | '!'
            | '&'
            | '|'
            | '~'
            | '?'
            | ':'
            | ','
    )
}

fn tokenize(s: &str, d: &Dialect) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let tok = match c {
            c if c.is_whitespace() => continue,
            '+' => Tok::Add,
            '-' => Tok::Sub,
            '/' => Tok::Div,
            '%' => Tok::Rem,
            '(' => Tok::Open,
            ')' => Tok::Close,
            '*' => {
                if d.pow == "**" && matches!(it.peek(), Some((_, '*'))) {
                    it.next();
                    Tok::Pow
                } else {
                    Tok::Mul
                }
            }
            '^' if d.pow == "^" => Tok::Pow,
            c if is_op_char(c) => {
                return Err(format!("unsupported operator '{c}' in '{}'", short(s)));
            }
            _ => {
                let mut end = s.len();
                while let Some(&(j, c2)) = it.peek() {
                    if c2.is_whitespace() || is_op_char(c2) {
                        end = j;
                        break;
                    }
                    it.next();
                }
                let w = &s[i..end];
                Tok::Num((d.word)(w)?)
            }
        };
        out.push(tok);
    }
    Ok(out)
}

struct Eval<'t> {
    toks: &'t [Tok],
    pos: usize,
    src: &'t str,
}

/// `s`, shortened for error messages.
fn short(s: &str) -> String {
    const MAX: usize = 48;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn binding(t: &Tok) -> Option<(u8, u8)> {
    match t {
        Tok::Add | Tok::Sub => Some((1, 2)),
        Tok::Mul | Tok::Div | Tok::Rem => Some((3, 4)),
        // Right-associative, binds tighter than * / %.
        Tok::Pow => Some((6, 5)),
        _ => None,
    }
}

impl Eval<'_> {
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn expr(&mut self, min_bp: u8, depth: usize) -> Result<i64, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "expression '{}' is nested too deeply",
                short(self.src)
            ));
        }
        let mut lhs = match self.next() {
            Some(Tok::Num(v)) => v,
            Some(Tok::Open) => {
                let v = self.expr(0, depth + 1)?;
                match self.next() {
                    Some(Tok::Close) => v,
                    _ => return Err(format!("missing ')' in '{}'", short(self.src))),
                }
            }
            // Unary minus and plus bind tighter than every binary operator
            // (bash: -2**2 == 4).
            Some(Tok::Sub) => {
                let v = self.expr(7, depth + 1)?;
                v.checked_neg()
                    .ok_or_else(|| format!("arithmetic overflow in '{}'", short(self.src)))?
            }
            Some(Tok::Add) => self.expr(7, depth + 1)?,
            _ => return Err(format!("malformed expression '{}'", short(self.src))),
        };
        while let Some(op) = self.peek() {
            let Some((lbp, rbp)) = binding(op) else {
                break;
            };
            if lbp < min_bp {
                break;
            }
            let op = op.clone();
            self.pos += 1;
            let rhs = self.expr(rbp, depth + 1)?;
            lhs = apply(&op, lhs, rhs, self.src)?;
        }
        Ok(lhs)
    }
}

fn apply(op: &Tok, a: i64, b: i64, src: &str) -> Result<i64, String> {
    let src = &short(src);
    let overflow = || format!("arithmetic overflow in '{src}'");
    match op {
        Tok::Add => a.checked_add(b).ok_or_else(overflow),
        Tok::Sub => a.checked_sub(b).ok_or_else(overflow),
        Tok::Mul => a.checked_mul(b).ok_or_else(overflow),
        Tok::Div | Tok::Rem if b == 0 => Err(format!("division by zero in '{src}'")),
        // Truncating division, as in C and bash.
        Tok::Div => a.checked_div(b).ok_or_else(overflow),
        Tok::Rem => a.checked_rem(b).ok_or_else(overflow),
        Tok::Pow => {
            if b < 0 {
                return Err(format!("negative exponent in '{src}'"));
            }
            match a {
                0 | 1 => Ok(if b == 0 { 1 } else { a }),
                -1 => Ok(if b % 2 == 0 { 1 } else { -1 }),
                _ => {
                    let e = u32::try_from(b).map_err(|_| overflow())?;
                    a.checked_pow(e).ok_or_else(overflow)
                }
            }
        }
        _ => Err(format!("malformed expression '{src}'")),
    }
}

/// Evaluates an integer expression with `+ - * / %`, the dialect's power
/// operator, parentheses and unary minus/plus.
pub(crate) fn eval(expr: &str, d: &Dialect) -> Result<i64, String> {
    let toks = tokenize(expr, d)?;
    if toks.is_empty() {
        return Err("empty expression".to_string());
    }
    let mut ev = Eval {
        toks: &toks,
        pos: 0,
        src: expr,
    };
    let v = ev.expr(0, 0)?;
    if ev.pos != toks.len() {
        return Err(format!("malformed expression '{}'", short(expr)));
    }
    Ok(v)
}

/// Parses a bash integer literal: decimal, `0x` hex or leading-zero octal.
fn bash_number(w: &str) -> Result<i64, String> {
    let bad = || format!("'{w}' is not a number");
    let (digits, radix) = if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        (h, 16)
    } else if w.len() > 1 && w.starts_with('0') {
        (&w[1..], 8)
    } else {
        (w, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(bad());
    }
    i64::from_str_radix(digits, radix).map_err(|_| format!("number '{w}' is out of range"))
}

impl Vars<'_> {
    /// Value of a `$((...))` identifier.
    fn lookup(&self, name: &str) -> Result<i64, String> {
        let too_big = || format!("variable {name} is out of range");
        match name {
            "MEMTOTAL_BYTES" => i64::try_from(self.mem_bytes).map_err(|_| too_big()),
            "NUM_LOGICAL_CPUS" => Ok(i64::from(self.ncpus)),
            _ => match self.vars.get(name) {
                Some(v) => v
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| format!("variable {name}='{v}' is not an integer")),
                None => Err(format!("unknown variable '{name}' in $((...))")),
            },
        }
    }

    fn bash_word(&self, w: &str) -> Result<i64, String> {
        if w.starts_with(|c: char| c.is_ascii_digit()) {
            return bash_number(w);
        }
        let name = w.strip_prefix('$').unwrap_or(w);
        let name = name
            .strip_prefix('{')
            .and_then(|n| n.strip_suffix('}'))
            .unwrap_or(name);
        let ident = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            return Err(format!("'{w}' is not a number or variable name"));
        }
        self.lookup(name)
    }

    /// Evaluates one bash arithmetic expression (the inside of `$((...))`).
    pub(crate) fn eval_bash(&self, expr: &str) -> Result<i64, String> {
        let word = |w: &str| self.bash_word(w);
        eval(
            expr,
            &Dialect {
                pow: "**",
                word: &word,
            },
        )
    }

    /// Replaces every `$((expr))` with its decimal value (mmtests runs its job
    /// files through a bash heredoc, so this happens before fio sees them).
    pub(crate) fn expand_arith(&self, s: &str) -> Result<String, String> {
        self.expand_arith_depth(s, 0)
    }

    fn expand_arith_depth(&self, s: &str, depth: usize) -> Result<String, String> {
        if depth > MAX_DEPTH {
            return Err("$((...)) nested too deeply".to_string());
        }
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(start) = rest.find("$((") {
            out.push_str(&rest[..start]);
            let body = &rest[start + 3..];
            // The `$((` opened two parentheses; find where both are closed.
            let mut level = 2usize;
            let mut end = None;
            for (i, c) in body.char_indices() {
                match c {
                    '(' => level += 1,
                    ')' => {
                        level -= 1;
                        if level == 0 {
                            end = Some(i);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else {
                return Err(format!("unterminated $(( in '{}'", short(s)));
            };
            // `end` is the second closing parenthesis; the expression stops
            // just before the first one.
            let inner = match body[..end].strip_suffix(')') {
                Some(inner) if balanced(inner) => inner,
                _ => return Err(format!("malformed $((...)) in '{}'", short(s))),
            };
            let inner = self.expand_arith_depth(inner, depth + 1)?;
            let v = self.eval_bash(&inner)?;
            out.push_str(&v.to_string());
            rest = &body[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// Replaces every `${NAME}` with the caller-supplied variable. Unlike fio,
    /// an unset variable is an error rather than an empty string.
    pub(crate) fn expand_env(&self, s: &str) -> Result<String, String> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(close) = after.find('}') else {
                // No closing brace: fio copies the text unchanged.
                out.push_str(&rest[start..]);
                return Ok(out);
            };
            let name = &after[..close];
            if name.is_empty() {
                return Err("empty variable name in '${}'".to_string());
            }
            match self.vars.get(name) {
                Some(v) => out.push_str(v),
                None => return Err(format!("environment variable '{name}' is not set")),
            }
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// Replaces fio's reserved keywords. When one was replaced and the value
    /// is plain integer arithmetic, it is evaluated, as fio does by piping it
    /// through bc (integer division, `^` for powers).
    pub(crate) fn expand_keywords(&self, s: &str) -> Result<String, String> {
        if !s.contains('$') {
            return Ok(s.to_string());
        }
        let mb = (self.mem_bytes / (1024 * 1024)).to_string();
        let out = s
            .replace("$pagesize", &self.pagesize.to_string())
            .replace("$mb_memory", &mb)
            .replace("$ncpus", &self.ncpus.to_string());
        if out == s {
            return Ok(out);
        }
        let has_op = out.contains(['+', '-', '*', '/']);
        let pure = out
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_whitespace() || "+-*/%^()".contains(c));
        if has_op && pure {
            let word = |w: &str| {
                w.parse::<i64>()
                    .map_err(|_| format!("number '{w}' is out of range"))
            };
            let v = eval(
                &out,
                &Dialect {
                    pow: "^",
                    word: &word,
                },
            )?;
            return Ok(v.to_string());
        }
        Ok(out)
    }
}

/// True when the parentheses of `s` are balanced.
fn balanced(s: &str) -> bool {
    let mut level = 0i64;
    for c in s.chars() {
        match c {
            '(' => level += 1,
            ')' => {
                level -= 1;
                if level < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    level == 0
}
