// agones-py conformance client for the official Node.js SDK (@google-cloud/agones-sdk).
//
// Follows the call sequence of Agones' test/sdk/nodejs client: watch (the first event sets the
// "annotation" annotation to the uid), ready, get, label = creation timestamp, one health ping,
// reserve(5), allocate, then counters and lists through sdk.beta, shutdown and close.
// The sidecar in test mode decides pass/fail by comparing the request names it received.
//
// Env: AGONES_SDK_GRPC_PORT (read by the SDK), PAUSE_MS (the client's one-second waits,
// default 1000), SKIP (a step to leave out, to prove the server notices a missing call).

const AgonesSDK = require('@google-cloud/agones-sdk');

const pauseMs = parseInt(process.env.PAUSE_MS || '1000', 10);
const skip = process.env.SKIP || '';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function check(what, actual, expected) {
	const a = JSON.stringify(actual);
	const e = JSON.stringify(expected);
	if (a !== e) {
		throw new Error(`${what}: expected ${e}, got ${a}`);
	}
	console.log(`${what}: ${a}`);
}

async function main() {
	const sdk = new AgonesSDK();
	console.log('connecting');
	await sdk.connect();
	console.log('connected');

	let annotated = false;
	sdk.watchGameServer((gs) => {
		if (!annotated) {
			annotated = true;
			if (skip !== 'setannotation') {
				sdk.setAnnotation('annotation', gs.objectMeta.uid.toString());
			}
		}
	}, (err) => console.error('watch error', err.message));

	if (skip !== 'ready') {
		await sdk.ready();
	}
	const gs = await sdk.getGameServer();
	await sdk.setLabel('label', gs.objectMeta.creationTimestamp.toString());
	if (skip !== 'health') {
		sdk.health((err) => console.error('health error', err.message));
	}
	if (skip !== 'reserve') {
		await sdk.reserve(5);
	}
	await sleep(pauseMs);
	sdk.allocate();

	check('getCounterCount', await sdk.beta.getCounterCount('rooms'), 1);
	await sdk.beta.incrementCounter('rooms', 9);
	await sdk.beta.decrementCounter('rooms', 10);
	await sdk.beta.setCounterCount('rooms', 10);
	check('getCounterCapacity', await sdk.beta.getCounterCapacity('rooms'), 10);
	await sdk.beta.setCounterCapacity('rooms', 1);

	check('listContains', await sdk.beta.listContains('players', 'test1'), true);
	check('getListLength', await sdk.beta.getListLength('players'), 3);
	check('getListValues', await sdk.beta.getListValues('players'), ['test0', 'test1', 'test2']);
	await sdk.beta.appendListValue('players', 'test3');
	await sdk.beta.deleteListValue('players', 'test2');
	check('getListCapacity', await sdk.beta.getListCapacity('players'), 100);
	await sdk.beta.setListCapacity('players', 2);
	check('getListValues after setListCapacity', await sdk.beta.getListValues('players'), ['test0', 'test1']);

	await sleep(pauseMs);
	await sdk.shutdown();
	await sleep(pauseMs);
	sdk.close();
	await sleep(pauseMs);
	console.log('done');
	process.exit(0);
}

main().catch((err) => {
	// As in Agones' client, a failure only shows as a missing request name on the server side.
	console.error(err);
	process.exitCode = 1;
});
