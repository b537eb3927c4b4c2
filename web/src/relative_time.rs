//! When something happened, as the conversation list says it: "just now", "5 min ago",
//! "3 h ago" earlier today, "yesterday", then the date. Days are the person's local calendar
//! days, which only the browser knows.

use js_sys::Date;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// How long before `now` the moment `then` was (both in milliseconds since the Unix epoch).
pub fn ago(then: f64, now: f64) -> String {
    // Whole minutes as an integer: formatting an f64 would pull Rust's float printing into the wasm.
    let minutes = ((now - then) / 60_000.0).floor() as i64;
    if minutes < 1 {
        return "just now".to_string();
    }
    if minutes < 60 {
        return format!("{minutes} min ago");
    }
    let today = midnight(now, 0);
    if then >= today {
        return format!("{} h ago", minutes / 60);
    }
    if then >= midnight(now, -1) {
        return "yesterday".to_string();
    }
    let day = Date::new(&then.into());
    let date = format!(
        "{} {}",
        day.get_date(),
        MONTHS[day.get_month() as usize % 12]
    );
    if day.get_full_year() == Date::new(&now.into()).get_full_year() {
        date
    } else {
        format!("{date} {}", day.get_full_year())
    }
}

/// The moment as an ISO 8601 date and time, for `<time datetime>`.
pub fn iso(moment: f64) -> String {
    Date::new(&moment.into()).to_iso_string().into()
}

/// The local midnight that began the day `days` away from the one `moment` falls on.
fn midnight(moment: f64, days: i32) -> f64 {
    let day = Date::new(&moment.into());
    Date::new_with_year_month_day(
        day.get_full_year(),
        day.get_month() as i32,
        day.get_date() as i32 + days,
    )
    .get_time()
}
