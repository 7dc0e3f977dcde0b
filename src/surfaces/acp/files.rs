//! The core's `file_request`s served by the editor (`fs/read_text_file`,
//! `fs/write_text_file`), when its `initialize` offered them: the file
//! tools then see its unsaved buffers and it shows the change itself. The
//! core checked the path (roots, protected paths) before asking.

use agent_client_protocol::v1::schema::{
    ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest,
};

use super::Acp;
use crate::protocol::{FileRequest, Op};

/// Asks the client to read or write, and hands the core the answer.
pub async fn serve(acp: &Acp, session: &str, request: FileRequest) {
    let path = std::path::PathBuf::from(&request.path);
    let answer = match request.content {
        Some(content) => {
            let write = WriteTextFileRequest::new(session.to_string(), path, content);
            acp.peer
                .request("fs/write_text_file", write)
                .await
                .map(|_| None)
        }
        None => {
            let read = ReadTextFileRequest::new(session.to_string(), path);
            acp.peer
                .request("fs/read_text_file", read)
                .await
                .and_then(|value| {
                    serde_json::from_value::<ReadTextFileResponse>(value)
                        .map(|r| Some(r.content))
                        .map_err(|e| format!("the editor's answer does not parse: {e}"))
                })
        }
    };
    let (content, error) = match answer {
        Ok(content) => (content, None),
        Err(why) => (None, Some(why)),
    };
    acp.link.submit(Op::FileAnswer {
        id: request.id,
        content,
        error,
    });
}
