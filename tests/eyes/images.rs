//! Images as message content, end to end, through the real binary and the
//! scripted fake model, which checks the request's content parts.

use serde_json::Value;

use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// A PNG of one colour.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbaImage::from_pixel(width, height, image::Rgba([220, 20, 60, 255]));
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgba8(image)
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode png");
    out.into_inner()
}

/// Standard base64, decoded (the test's own, to check what was sent).
pub fn unbase64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | (u32::from(d) << (18 - 6 * i)));
        for i in 0..chunk.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// Every `image_url` part of a chat-completions body: (media type, bytes).
pub fn image_parts(body: &Value) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for part in message["content"].as_array().into_iter().flatten() {
            if part["type"] != "image_url" {
                continue;
            }
            let url = part["image_url"]["url"].as_str().expect("url");
            let rest = url.strip_prefix("data:").expect("a data URI");
            let (media, data) = rest.split_once(";base64,").expect("base64 data URI");
            found.push((media.to_string(), unbase64(data)));
        }
    }
    found
}

/// Width and height of encoded image bytes.
pub fn size_of(bytes: &[u8]) -> (u32, u32) {
    image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .expect("format")
        .into_dimensions()
        .expect("dimensions")
}

/// A Cli whose workspace holds `name` with `bytes`, the model scripted to
/// `read_file` it and then answer.
async fn reading(fake: &FakeLlama, name: &str, bytes: &[u8]) -> Cli {
    let cli = Cli::new(fake, "");
    std::fs::create_dir_all(cli.workspace()).expect("workspace");
    std::fs::write(cli.workspace().join(name), bytes).expect("picture");
    let arguments = format!("{{\"path\": \"{name}\"}}");
    fake.push_replies([
        Reply::tool_calls(&[("read_file", arguments.as_str())]),
        Reply::text("A red square."),
    ]);
    cli
}

#[tokio::test]
async fn read_file_of_a_png_reaches_a_vision_model_as_an_image_part() {
    let fake = FakeLlama::start().await;
    fake.set_vision(true);
    let bytes = png(40, 30);
    let cli = reading(&fake, "red.png", &bytes).await;
    let out = cli.run(&["-m", "what is in red.png?", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(image_parts(&requests[0]).is_empty());
    let images = image_parts(&requests[1]);
    assert_eq!(images.len(), 1, "{}", requests[1]);
    assert_eq!(images[0].0, "image/png");
    // Small enough to be sent as it is on disk.
    assert_eq!(images[0].1, bytes);
    // The result itself is a short line, not the file's bytes.
    let messages = requests[1]["messages"].as_array().expect("messages");
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool message");
    let text = result["content"].as_str().expect("text result");
    assert!(
        text.contains("red.png") && text.contains("40x30 png"),
        "{text}"
    );
    let events = events(&out);
    assert_eq!(of_type(&events, "final")[0]["text"], "A red square.");
}

#[tokio::test]
async fn a_large_picture_arrives_scaled_to_the_longest_side() {
    let fake = FakeLlama::start().await;
    fake.set_vision(true);
    let cli = reading(&fake, "wide.png", &png(3136, 1000)).await;
    let out = cli.run(&["-m", "look at wide.png"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let images = image_parts(&fake.requests()[1]);
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].0, "image/png");
    assert_eq!(size_of(&images[0].1), (1568, 500));
}

#[tokio::test]
async fn a_text_only_model_reads_a_note_and_the_user_is_told_once() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).expect("workspace");
    std::fs::write(cli.workspace().join("red.png"), png(1280, 720)).expect("picture");
    std::fs::write(cli.workspace().join("small.png"), png(20, 20)).expect("picture");
    fake.push_replies([
        Reply::tool_calls(&[("read_file", "{\"path\": \"red.png\"}")]),
        Reply::tool_calls(&[("read_file", "{\"path\": \"small.png\"}")]),
        Reply::text("I cannot see them."),
    ]);
    let out = cli.run(&["-m", "what is in these?", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert!(image_parts(request).is_empty(), "{request}");
    }
    let sent = requests[2]["messages"].to_string();
    assert!(
        sent.contains("[image 1280x720 png: not shown, no vision model configured]"),
        "{sent}"
    );
    assert!(sent.contains("[image 20x20 png: not shown"), "{sent}");
    let events = events(&out);
    let told: Vec<_> = of_type(&events, "notice")
        .into_iter()
        .filter(|n| {
            n["message"]
                .as_str()
                .unwrap_or("")
                .contains("cannot see images")
        })
        .collect();
    assert_eq!(told.len(), 1, "{events:?}");
}
