//! An SVG chart of a benchmark comparison: one row per metric, one bar per platform,
//! bars scaled to the row's largest value, with the value printed and whether higher or
//! lower is better.

use std::collections::HashMap;
use std::fmt::Write;

const COLORS: &[&str] = &["#d9480f", "#1971c2", "#2f9e44", "#7048e8"];

/// `metrics`: (key, label, higher is better); `results`: (platform, values).
pub fn svg(metrics: &[&(&str, &str, bool)], results: &[(String, HashMap<String, f64>)]) -> String {
    let rows: Vec<_> = metrics.iter().filter(|(k, ..)| results.iter().any(|(_, v)| v.contains_key(*k))).collect();
    let bar = 14;
    let row_h = bar * results.len() + 14;
    let (label_w, chart_w) = (420, 360);
    let height = 40 + rows.len() * row_h + 20;
    let width = label_w + chart_w + 120;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" \
         font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for (i, (name, _)) in results.iter().enumerate() {
        let x = label_w + i * 180;
        let _ = writeln!(
            s,
            "<rect x=\"{x}\" y=\"10\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"20\">{}</text>",
            COLORS[i % COLORS.len()],
            x + 16,
            escape(name)
        );
    }
    for (r, (key, label, higher)) in rows.iter().enumerate() {
        let y = 40 + r * row_h;
        let better = if *higher { "higher is better" } else { "lower is better" };
        let _ = writeln!(s, "<text x=\"8\" y=\"{}\">{} ({better})</text>", y + row_h / 2, escape(label));
        let max = results.iter().filter_map(|(_, v)| v.get(*key)).fold(0.0f64, |a, &b| a.max(b));
        for (i, (_, v)) in results.iter().enumerate() {
            let Some(&x) = v.get(*key) else { continue };
            let w = if max > 0.0 { (x / max * chart_w as f64).max(1.0) } else { 1.0 };
            let by = y + i * bar;
            let _ = writeln!(
                s,
                "<rect x=\"{label_w}\" y=\"{by}\" width=\"{w:.1}\" height=\"{}\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{}\">{x:.3}</text>",
                bar - 2,
                COLORS[i % COLORS.len()],
                label_w as f64 + w + 4.0,
                by + bar - 4
            );
        }
    }
    s + "</svg>\n"
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_platform_and_metric() {
        let m = [("a", "alpha <x>", true), ("b", "beta", false), ("c", "nobody", true)];
        let metrics: Vec<&(&str, &str, bool)> = m.iter().collect();
        let results = vec![
            ("P1".to_string(), HashMap::from([("a".to_string(), 2.0), ("b".to_string(), 1.0)])),
            ("P2".to_string(), HashMap::from([("a".to_string(), 1.0)])),
        ];
        let s = svg(&metrics, &results);
        // A legend square and a bar per value.
        assert_eq!(s.matches("#d9480f").count(), 3);
        assert_eq!(s.matches("#1971c2").count(), 2);
        assert!(s.contains("alpha &lt;x&gt; (higher is better)"));
        assert!(!s.contains("nobody"));
        assert!(s.contains("width=\"360.0\""), "{s}");
    }
}
