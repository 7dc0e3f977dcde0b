//! Durations written as strings ("2s", "30m", "1h30m") and Discord ids
//! written as strings or integers.

use std::time::Duration;

use serde::{Deserialize, Deserializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigDuration(pub Duration);

impl ConfigDuration {
    pub const fn from_secs(secs: u64) -> Self {
        Self(Duration::from_secs(secs))
    }
    pub fn is_zero(&self) -> bool {
        self.0.is_zero()
    }
}

/// Parses "90s", "30m", "1h30m", "500ms", "2d"; a bare "0" means zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let bad =
        || format!("invalid duration `{text}` (use e.g. \"500ms\", \"30s\", \"5m\", \"1h30m\")");
    let mut total = Duration::ZERO;
    let mut rest = text;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        // Checked: a huge count must be an error, never a wrap (which
        // turned "307445734561825861m" into 44 s) nor a panic.
        let too_long = || format!("duration `{text}` is too long");
        let part = match unit {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.checked_mul(60).ok_or_else(too_long)?),
            "h" => Duration::from_secs(n.checked_mul(3600).ok_or_else(too_long)?),
            "d" => Duration::from_secs(n.checked_mul(86400).ok_or_else(too_long)?),
            _ => return Err(bad()),
        };
        total = total.checked_add(part).ok_or_else(too_long)?;
    }
    Ok(total)
}

impl<'de> Deserialize<'de> for ConfigDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Secs(u64),
        }
        match Raw::deserialize(d)? {
            Raw::Text(t) => parse_duration(&t)
                .map(Self)
                .map_err(serde::de::Error::custom),
            Raw::Secs(0) => Ok(Self(Duration::ZERO)),
            Raw::Secs(n) => Err(serde::de::Error::custom(format!(
                "durations are strings with a unit, e.g. \"{n}s\""
            ))),
        }
    }
}

/// An id as the file may write it: Discord ids exceed what some tools
/// keep exact as numbers, so a string or an integer.
#[derive(Deserialize)]
#[serde(untagged)]
enum Id {
    Text(String),
    Int(u64),
    /// Telegram group chat ids are negative.
    Signed(i64),
}

impl Id {
    fn text(self) -> String {
        match self {
            Id::Text(t) => t,
            Id::Int(n) => n.to_string(),
            Id::Signed(n) => n.to_string(),
        }
    }
}

/// A list of ids, each a string or an integer.
pub fn string_or_int_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let ids = Vec::<Id>::deserialize(d)?;
    Ok(ids.into_iter().map(Id::text).collect())
}

/// One id written as a string or an integer (`[[bindings]] user = 123`);
/// with `#[serde(default)]` a missing one is `None`.
pub fn string_or_int_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Some(Id::deserialize(d)?.text()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        for bad in ["", "5", "m", "5x", "1h30", "-1s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn overflowing_durations_are_errors() {
        for huge in [
            "18446744073709551615s1s",
            "307445734561825861m",
            "18446744073709551615h",
            "213503982334602d",
            "99999999999999999999s",
        ] {
            let err = parse_duration(huge).unwrap_err();
            assert!(err.contains(huge), "{err}");
        }
        assert_eq!(
            parse_duration("18446744073709551615s").unwrap(),
            Duration::from_secs(u64::MAX)
        );
    }
}
