Content-Length: 86

{"jsonrpc":"2.0","method":"initialize","id":1,"params":{"clientInfo":{"name":"fuzz"}}}Content-Len