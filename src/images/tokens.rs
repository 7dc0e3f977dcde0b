//! What an image costs in a model's window, by each provider's published
//! rule; the window fitting and compaction add it to a message's text.

/// Anthropic: about `width * height / 750` tokens (its vision guide).
pub fn anthropic(width: u32, height: u32) -> u64 {
    (u64::from(width) * u64::from(height)).div_ceil(750).max(1)
}

/// OpenAI (high detail): scaled into 2048x2048, then the shortest side
/// to 768, counted in 512-px tiles: 85 + 170 per tile.
pub fn openai(width: u32, height: u32) -> u64 {
    let (mut w, mut h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    let fit = (2048.0 / w.max(h)).min(1.0);
    (w, h) = (w * fit, h * fit);
    let shortest = (768.0 / w.min(h)).min(1.0);
    (w, h) = (w * shortest, h * shortest);
    let tiles = ((w / 512.0).ceil() * (h / 512.0).ceil()) as u64;
    85 + 170 * tiles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_examples() {
        // Anthropic's table: 1092x1092 is about 1590 tokens.
        assert_eq!(anthropic(1092, 1092), 1590);
        // OpenAI's example: 1024x1024 high detail is 765 tokens (4 tiles).
        assert_eq!(openai(1024, 1024), 765);
        // 2048x4096 becomes 768x1536: 6 tiles, 1105 tokens.
        assert_eq!(openai(2048, 4096), 1105);
    }
}
