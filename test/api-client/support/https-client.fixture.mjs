// An API client over HTTPS, in a process of its own so that the test certificate (NODE_EXTRA_CA_CERTS, set by
// the test) is trusted as a host's CA list would be: two calls, close(), a third call, close(). It prints
// the balances it read.
import { VerificationApiClient } from '../../../dist/index.js';

const [baseUrl, transport] = process.argv.slice(2);
const client = VerificationApiClient.create({ baseUrl, apiKey: 'k', apiSecret: 's', transport });
const read = [await client.getBalance()];
// undici's pool reuses a socket an event-loop turn after its answer: the second call comes later.
await new Promise((resolve) => setTimeout(resolve, 20));
read.push(await client.getBalance());
client.close();
read.push(await client.getBalance());
client.close();
console.log(JSON.stringify(read.map((b) => b.balance.amount)));
