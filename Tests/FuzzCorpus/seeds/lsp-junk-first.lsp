Hello
Content-Length: 40

{"jsonrpc":"2.0","method":"ping","id":1}