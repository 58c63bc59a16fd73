// Calls the allocator's gRPC with @grpc/grpc-js (Node's own HTTP/2 and HPACK, not grpc's C core):
// raw request bytes in, one JSON line per call out. Env: PORT, CA, CERT, KEY (PEM files; no CA:
// plaintext), CALLS: comma-separated "method:hexRequest[:deadlineMs]".
'use strict';
const fs = require('fs');
const grpc = require('@grpc/grpc-js');

const env = process.env;
const credentials = env.CA
  ? grpc.credentials.createSsl(
      fs.readFileSync(env.CA),
      env.KEY ? fs.readFileSync(env.KEY) : null,
      env.CERT ? fs.readFileSync(env.CERT) : null)
  : grpc.credentials.createInsecure();
const client = new grpc.Client(`localhost:${env.PORT}`, credentials);
const identity = (b) => b;

function call(method, request, deadlineMs) {
  return new Promise((resolve) => {
    const options = deadlineMs ? {deadline: Date.now() + deadlineMs} : {};
    if (method.endsWith('/Watch')) {
      const stream = client.makeServerStreamRequest(method, identity, identity, request,
        new grpc.Metadata(), options);
      stream.on('data', (data) => {
        resolve({method, code: 0, response: data.toString('hex')});
        stream.cancel();
      });
      stream.on('error', (err) => resolve({method, code: err.code, details: err.details}));
      return;
    }
    client.makeUnaryRequest(method, identity, identity, request, new grpc.Metadata(), options,
      (err, response) => resolve(err
        ? {method, code: err.code, details: err.details}
        : {method, code: 0, response: response.toString('hex')}));
  });
}

(async () => {
  for (const spec of env.CALLS.split(',')) {
    const [method, hex, deadline] = spec.split(':');
    const result = await call(method, Buffer.from(hex || '', 'hex'), Number(deadline || 0));
    console.log(JSON.stringify(result));
  }
  client.close();
})();
