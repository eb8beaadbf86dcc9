//! clap's value parser for the option enums of `named_values!`: it parses with their
//! `FromStr` (names and aliases, any case) and lists their names as the possible values
//! (`--help`, shell completion).

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use flowboost_operators::named::Named;
use std::ffi::OsStr;
use std::marker::PhantomData;
use std::str::FromStr;

/// The value parser of an option whose values are the names of `T`.
#[derive(Clone, Copy, Debug)]
pub struct NamedValues<T>(PhantomData<T>);

/// The value parser for `T`: `#[arg(long, value_parser = named::<OzaVotes>())]`.
pub fn named<T>() -> NamedValues<T> {
    NamedValues(PhantomData)
}

impl<T> TypedValueParser for NamedValues<T>
where
    T: Named + FromStr + Clone + Send + Sync,
    T::Err: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        StringValueParser::new()
            .try_map(|s| s.parse::<T>())
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(T::NAMES.iter().map(|&n| PossibleValue::new(n))))
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::Cli;
    use clap::CommandFactory;

    /// Whether `text` names `value` as a word of its own.
    fn names(text: &str, value: &str) -> bool {
        text.match_indices(value).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + value.len()..].chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-');
            !word(before) && !word(after)
        })
    }

    /// Every option with a fixed set of values names each of them once in `--help`:
    /// in its own text (which says what each means), and then clap's
    /// `[possible values: ...]` is hidden; or only in clap's list.
    #[test]
    fn help_names_each_options_values_once() {
        let mut stack = vec![(String::from("flowboost"), Cli::command())];
        let mut checked = 0;
        let mut wrong = Vec::new();
        while let Some((path, cmd)) = stack.pop() {
            for arg in cmd.get_arguments() {
                let values: Vec<String> = arg
                    .get_possible_values()
                    .iter()
                    .filter(|v| !v.is_hide_set())
                    .map(|v| v.get_name().to_string())
                    .collect();
                if values.is_empty() {
                    continue;
                }
                checked += 1;
                let text = arg
                    .get_long_help()
                    .or(arg.get_help())
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let named_in_text = values.iter().all(|v| names(&text, v));
                let listed = !arg.is_hide_possible_values_set();
                if named_in_text == listed {
                    wrong.push(format!(
                        "{path} --{}: values {values:?} {}",
                        arg.get_id(),
                        if listed {
                            "named in its text and in [possible values]: hide_possible_values"
                        } else {
                            "named nowhere: its text should name them, or show clap's list"
                        }
                    ));
                }
            }
            for sub in cmd.get_subcommands() {
                stack.push((format!("{path} {}", sub.get_name()), sub.clone()));
            }
        }
        assert!(checked >= 20, "only {checked} options with values found");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
