//! System One request bodies as the fake server reads them (systemone-wire.md §13 items 3–6),
//! and review bodies as `jevjudge serve` reads them: any bytes get an answer or a typed
//! rejection (400/422, never a 5xx, never a panic). When the fake answers a request that our
//! own client would also send (it passes the client's checks of §5), the answer passes the
//! client's response checks of §7 — the fake and the client agree.
#![no_main]

use jevjudge_wire::{Questions, Request, Response};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let _ = jevjudge_serve::ReviewRequest::from_slice(data);

    let Ok(body) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    match jevjudge_fake::answer(&body) {
        Err(rejection) => assert!(
            matches!(rejection.status, 400 | 422),
            "a malformed request got {}",
            rejection.status
        ),
        Ok(answer) => {
            let (Some(state), Some(questions)) = (body.get("state"), body.get("questions")) else {
                panic!("the fake answered a request without state or questions");
            };
            let Ok(questions) = serde_json::from_value::<Questions>(questions.clone()) else {
                return;
            };
            let request = Request::new(state.clone(), questions.clone());
            if request.check(jevjudge_wire::DEFAULT_MODEL).is_err() {
                return; // the fake is more lenient than the client, like the live API
            }
            let response = Response::from_json(&answer).expect("the fake's answer parses");
            if let Err(error) = response.check(&questions) {
                panic!("the fake's answer fails the client's checks: {error:?}");
            }
        }
    }
});
