//! A rate as the fake's flags write it: `200/s`, `1200/m`, `3600/h`.

use std::fmt;
use std::str::FromStr;

/// An amount per unit of time (requests or tokens), parsed from `N/s`, `N/m` or `N/h`.
///
/// `N` is a positive finite number (`0.5/s` is one every two seconds).
///
/// ```
/// use jevjudge_fake::Rate;
///
/// let rate: Rate = "1200/m".parse().expect("a rate");
/// assert_eq!(rate.per_second(), 20.0);
/// assert_eq!(rate.to_string(), "1200/m");
/// assert!("200".parse::<Rate>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    amount: f64,
    unit: Unit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Second,
    Minute,
    Hour,
}

impl Unit {
    fn seconds(self) -> f64 {
        match self {
            Unit::Second => 1.0,
            Unit::Minute => 60.0,
            Unit::Hour => 3600.0,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Unit::Second => "s",
            Unit::Minute => "m",
            Unit::Hour => "h",
        }
    }
}

impl Rate {
    /// `amount` per second; `None` unless it is positive and finite.
    pub fn per_second_of(amount: f64) -> Option<Rate> {
        (amount.is_finite() && amount > 0.0).then_some(Rate {
            amount,
            unit: Unit::Second,
        })
    }

    /// The rate in units per second.
    pub fn per_second(self) -> f64 {
        self.amount / self.unit.seconds()
    }

    /// One second's worth, at least 1: the default bucket size.
    pub fn one_second(self) -> f64 {
        self.per_second().max(1.0)
    }
}

/// Why a rate did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not a rate like 200/s, 1200/m or 3600/h (a positive number, `/`, then s, m or h)"
)]
pub struct RateError {
    text: String,
}

impl FromStr for Rate {
    type Err = RateError;

    fn from_str(text: &str) -> Result<Rate, RateError> {
        let error = || RateError {
            text: text.to_owned(),
        };
        let (amount, unit) = text.trim().split_once('/').ok_or_else(error)?;
        let unit = match unit.trim() {
            "s" | "sec" | "second" => Unit::Second,
            "m" | "min" | "minute" => Unit::Minute,
            "h" | "hour" => Unit::Hour,
            _ => return Err(error()),
        };
        let amount: f64 = amount.trim().parse().map_err(|_| error())?;
        if !(amount.is_finite() && amount > 0.0) {
            return Err(error());
        }
        Ok(Rate { amount, unit })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.amount, self.unit.suffix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_minutes_and_hours_parse() {
        let per_second = |text: &str| text.parse::<Rate>().map(Rate::per_second);
        assert_eq!(per_second("200/s"), Ok(200.0));
        assert_eq!(per_second("1200/m"), Ok(20.0));
        assert_eq!(per_second(" 3600/h "), Ok(1.0));
        assert_eq!(per_second("0.5/s"), Ok(0.5));
    }

    #[test]
    fn bad_rates_are_refused_with_the_expected_form() {
        for text in [
            "", "200", "/s", "0/s", "-1/s", "NaN/s", "inf/s", "10/d", "ten/s",
        ] {
            let error = text.parse::<Rate>().err().map(|e| e.to_string());
            assert!(
                error.as_deref().is_some_and(|e| e.contains("200/s")),
                "{text:?}: {error:?}"
            );
        }
    }

    #[test]
    fn one_second_is_at_least_one() {
        assert_eq!("1/m".parse::<Rate>().map(Rate::one_second), Ok(1.0));
        assert_eq!("200/s".parse::<Rate>().map(Rate::one_second), Ok(200.0));
    }
}
