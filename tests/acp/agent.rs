//! `egirl acp` driven by a real ACP client (the npm SDK's client side).
