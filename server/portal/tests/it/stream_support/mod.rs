//! What the two adapters' recorded-stream tests share: a decoded stream rendered one event a
//! line, and the check that every way of feeding a recording decodes to the same events.

use expect_test::Expect;
use portal_model::ModelEvent;
use portal_model::endpoint::EndpointError;

/// The events of a stream and the error that ended it, if any.
pub type Decoded = (Vec<ModelEvent>, Option<EndpointError>);

/// One line an event, then the error.
pub fn render((events, error): &Decoded) -> String {
    let mut lines: Vec<String> = events
        .iter()
        .map(|event| match event {
            ModelEvent::ThinkingDelta(text) => format!("thinking {text:?}"),
            ModelEvent::TextDelta(text) => format!("text {text:?}"),
            ModelEvent::ToolCallStart { index, id, name } => {
                format!("call {index} starts: {name} {id:?}")
            }
            ModelEvent::ToolCallArgumentsDelta { index, delta } => {
                format!("call {index} arguments {delta:?}")
            }
            ModelEvent::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => match arguments {
                Ok(arguments) => format!("call {index} ends: {name} {id:?} {arguments}"),
                Err(bad) => format!("call {index} ends: {name} {id:?} refused: {bad}"),
            },
            ModelEvent::Usage(tokens) => format!(
                "usage: {} in ({} cached), {} out ({} reasoning)",
                tokens.input, tokens.cached_input, tokens.output, tokens.reasoning
            ),
            ModelEvent::Finished { reason } => format!("finished: {reason:?}"),
        })
        .collect();
    if let Some(error) = error {
        lines.push(format!("error: {error}"));
    }
    lines.join("\n") + "\n"
}

/// Decodes the recording `name` whole, checks the events, then checks that every way of cutting
/// it in two, and feeding it a byte at a time, gives the same events: a cut may fall inside a
/// line, between `\r` and `\n`, or inside a multi-byte character. Returns the whole decoding.
pub fn check_cuts(
    name: &str,
    bytes: &[u8],
    decode: impl Fn(&[&[u8]]) -> Decoded,
    expected: Expect,
) -> Decoded {
    let whole = decode(&[bytes]);
    expected.assert_eq(&render(&whole));
    for at in 0..=bytes.len() {
        let (head, tail) = bytes.split_at(at);
        assert_eq!(decode(&[head, tail]), whole, "{name} cut at byte {at}");
    }
    let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode(&bytewise), whole, "{name} fed a byte at a time");
    whole
}

/// What the decoded stream's usage costs at 3.00 per million input tokens, 0.30 per million
/// cached ones and 15.00 per million output tokens, in nano-units.
pub fn cost_at_list_prices(decoded: &Decoded) -> u64 {
    let price =
        portal_core::usage::Price::per_million("USD", 3.0, Some(0.3), 15.0).expect("a valid price");
    let tokens = decoded
        .0
        .iter()
        .find_map(|event| match event {
            ModelEvent::Usage(tokens) => Some(*tokens),
            _ => None,
        })
        .expect("the stream reports its usage");
    price.cost(&tokens).nanos
}
