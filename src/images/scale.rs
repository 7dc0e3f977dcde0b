//! Bringing a picture to the size a model takes: at most `max_side`
//! pixels on its longest side. Vision models scale larger pictures down
//! themselves (Anthropic's limit is 1568 px on the long side), so sending
//! more only costs bytes and tokens. PNG stays PNG and JPEG stays JPEG;
//! a GIF is sent as its first frame, in PNG (OpenAI refuses animated
//! ones, and llama.cpp reads the first frame anyway).

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// Quality of a JPEG re-encoded after a downscale.
const JPEG_QUALITY: u8 = 85;
/// Most memory one decode may take: a small file can claim a huge canvas.
const DECODE_ALLOC: u64 = 512 * 1024 * 1024;

/// The bytes to store and their media type: `bytes` as they are when
/// they fit and need no conversion, else re-encoded.
pub fn fit(bytes: &[u8], media_type: &str, max_side: u32) -> Result<(Vec<u8>, String), String> {
    let (width, height) = dimensions(bytes)?;
    let gif = media_type == "image/gif";
    if width.max(height) <= max_side && !gif {
        return Ok((bytes.to_vec(), media_type.to_string()));
    }
    let decoded = decode(bytes)?;
    let scaled = if width.max(height) > max_side {
        // `resize` keeps the aspect ratio within the box.
        decoded.resize(max_side, max_side, image::imageops::FilterType::Triangle)
    } else {
        decoded
    };
    match media_type {
        "image/jpeg" => Ok((encode_jpeg(&scaled)?, "image/jpeg".into())),
        _ => Ok((encode(&scaled, ImageFormat::Png)?, "image/png".into())),
    }
}

/// Width and height from the header, without decoding the pixels.
pub fn dimensions(bytes: &[u8]) -> Result<(u32, u32), String> {
    ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("unreadable image: {e}"))?
        .into_dimensions()
        .map_err(|e| format!("unreadable image: {e}"))
}

fn decode(bytes: &[u8]) -> Result<DynamicImage, String> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("unreadable image: {e}"))?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(DECODE_ALLOC);
    reader.limits(limits);
    reader
        .decode()
        .map_err(|e| format!("unreadable image: {e}"))
}

fn encode(image: &DynamicImage, format: ImageFormat) -> Result<Vec<u8>, String> {
    let mut out = Cursor::new(Vec::new());
    // PNG takes 8-bit RGBA whatever the source held (16-bit, float).
    DynamicImage::ImageRgba8(image.to_rgba8())
        .write_to(&mut out, format)
        .map_err(|e| format!("cannot re-encode the image: {e}"))?;
    Ok(out.into_inner())
}

fn encode_jpeg(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let rgb = image.to_rgb8();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY)
        .encode_image(&rgb)
        .map_err(|e| format!("cannot re-encode the image: {e}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbaImage::from_pixel(width, height, image::Rgba([200, 10, 10, 255]));
        let mut out = Cursor::new(Vec::new());
        DynamicImage::ImageRgba8(image)
            .write_to(&mut out, ImageFormat::Png)
            .expect("encode");
        out.into_inner()
    }

    #[test]
    fn a_small_png_is_kept_byte_for_byte() {
        let bytes = png(40, 30);
        let (kept, media) = fit(&bytes, "image/png", 1568).expect("fits");
        assert_eq!(kept, bytes);
        assert_eq!(media, "image/png");
    }

    #[test]
    fn a_large_png_is_scaled_to_the_longest_side_keeping_its_shape() {
        let (scaled, media) = fit(&png(400, 200), "image/png", 100).expect("scales");
        assert_eq!(media, "image/png");
        assert_eq!(dimensions(&scaled).expect("size"), (100, 50));
    }

    #[test]
    fn a_large_jpeg_stays_jpeg() {
        let mut jpeg = Vec::new();
        let rgb = image::RgbImage::from_pixel(300, 600, image::Rgb([1, 2, 3]));
        image::codecs::jpeg::JpegEncoder::new(&mut jpeg)
            .encode_image(&rgb)
            .expect("encode");
        let (scaled, media) = fit(&jpeg, "image/jpeg", 120).expect("scales");
        assert_eq!(media, "image/jpeg");
        assert_eq!(dimensions(&scaled).expect("size"), (60, 120));
    }

    #[test]
    fn garbage_is_one_line() {
        let e = fit(b"\x89PNG\r\n\x1a\nnot really", "image/png", 100).expect_err("garbage");
        assert!(e.starts_with("unreadable image"), "{e}");
        assert!(!e.contains('\n'));
    }
}
