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
    T: Named + FromStr<Err = String> + Clone + Send + Sync,
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
