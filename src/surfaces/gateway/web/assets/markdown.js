// the web UI: src/surfaces/gateway/web/assets
