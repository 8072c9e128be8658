Content-Length: 86

{"jsonrpc":"2.0","method":"initialize","id":1,"params":{"clientInfo":{"name":"fuzz"}}}Content-Length: 40

{"jsonrpc":"2.0","method":"ping","id":2}Content-Length: 100

{"jsonrpc":"2.0"