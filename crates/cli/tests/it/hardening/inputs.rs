//! Sections 4 to 6: bounded reads, inputs that load but cannot work, totals that wrap.

use super::*;

// ---- 4. Bounded reads ----

#[tokio::test(flavor = "multi_thread")]
async fn endless_inputs_stop_at_the_cap_naming_it_and_its_flag() {
    // /dev/zero as cases, records and definition: refused at the caps, never out of memory.
    let mut command = eval_offline(&example("refund/definition.toml"), Path::new("/dev/zero"));
    command.args(["--max-line-bytes", "1000000"]);
    exits_saying(
        &mut command,
        2,
        "longer than the cap of 1000000 bytes (raise it with --max-line-bytes)",
    )
    .await;

    let mut command = judge_refund(&[]);
    command.args(["--replay", "/dev/zero"]);
    exits_saying(&mut command, 2, "--max-line-bytes").await;

    let dir = temp_dir("harden-caps");
    let definition = dir.join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &definition).unwrap();
    let mut command = judge_refund_state(&["--fake", "--max-input-bytes", "100000"], &definition);
    exits_saying(
        &mut command,
        2,
        "cap of 100000 bytes (raise it with --max-input-bytes)",
    )
    .await;

    // A whole cases file over the in-memory cap.
    let cases = cases(&dir, 30);
    let mut command = eval_offline(&example("refund/definition.toml"), &cases);
    command.args(["--max-input-bytes", "500"]);
    exits_saying(&mut command, 2, "--max-input-bytes").await;
}

// ---- 5. Inputs that load but cannot work ----

#[tokio::test(flavor = "multi_thread")]
async fn inputs_that_cannot_work_are_refused_at_load() {
    let dir = temp_dir("harden-load");
    let refund = std::fs::read_to_string(example("refund/definition.toml")).unwrap();
    let start = refund.find("instructions = ").unwrap();
    let end = start + refund[start..].find('\n').unwrap();
    let blank = format!(
        "{}instructions = \"  \"{}",
        &refund[..start],
        &refund[end..]
    );
    let cases_path = cases(&dir, 2);
    let checks: Vec<(String, Option<String>, &str)> = vec![
        (
            blank,
            None,
            "criteria[0].question.instructions: must not be empty or only whitespace",
        ),
        (
            refund.replace("[[criteria]]", "[[criterion]]"),
            None,
            "the table is `[[criteria]]`, plural",
        ),
        (
            refund.clone(),
            Some(r#"{"scenario":"s","id":" ","state":"x","expected_pass":true}"#.to_owned()),
            "field `id`: must not be empty",
        ),
        (
            refund.clone(),
            Some(r#"{"scenario":"s","id":"a\u0007b","state":"x","expected_pass":true}"#.to_owned()),
            "field `id`: must not hold control characters (found U+0007)",
        ),
        (
            refund.clone(),
            Some(
                r#"{"scenario":"s","id":"a","state":"x","expected_pass":true,"expected_pass":false}"#
                    .to_owned(),
            ),
            "the key `expected_pass` appears twice",
        ),
        (
            refund.clone(),
            Some("{\n  \"scenario\": \"s\",\n  \"id\": \"a\"\n}".to_owned()),
            "one JSON object per line",
        ),
        (refund.clone(), Some(String::new()), "no cases: the file is empty"),
    ];
    for (i, (definition, cases_text, expected)) in checks.into_iter().enumerate() {
        let definition_path = dir.join(format!("d{i}.toml"));
        std::fs::write(&definition_path, definition).unwrap();
        let cases = match cases_text {
            Some(text) => {
                let path = dir.join(format!("c{i}.jsonl"));
                std::fs::write(&path, text).unwrap();
                path
            }
            None => cases_path.clone(),
        };
        let mut command = eval_offline(&definition_path, &cases);
        exits_saying(&mut command, 2, expected).await;
    }

    // 40,000 criteria: refused at once, naming the cap (the duplicate check is linear).
    let mut huge = String::from("version = \"v\"\n");
    for i in 0..40_000 {
        huge.push_str(&format!(
            "[[criteria]]\nid = \"c{i}\"\nexpected = true\nfail_at_or_below = 0.2\npass_at_or_above = 0.8\nquestion = {{ instructions = \"q\" }}\n"
        ));
    }
    let path = dir.join("huge.toml");
    std::fs::write(&path, huge).unwrap();
    exits_saying(
        &mut judge_refund_state(&["--fake"], &path),
        2,
        "40000 criteria; a definition holds at most 1000",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn record_files_with_bad_ids_times_or_conflicts_are_refused() {
    let dir = temp_dir("harden-jevl");
    let good = std::fs::read_to_string(example("refund/fixtures/supported.jevl")).unwrap();
    let good = good.trim_end();
    let record: Value = serde_json::from_str(good).unwrap();
    let with = |field: &str, value: Value| {
        let mut r = record.clone();
        r[field] = value;
        r.to_string()
    };
    let mut other_answers = record.clone();
    let answers = other_answers["answers"].as_object_mut().unwrap();
    for answer in answers.values_mut() {
        answer["noul"] = serde_json::json!(0.01);
    }
    let checks = [
        (
            with("id", "x".into()),
            ":1: field `id` must be a `sha256:` digest",
        ),
        (
            with("ts", "yesterday".into()),
            ":1: field `ts` must be an RFC 3339 time",
        ),
        (
            format!("{good}\n{}", other_answers),
            "records 1 and 2 answer the same request",
        ),
    ];
    for (i, (text, expected)) in checks.into_iter().enumerate() {
        let path = dir.join(format!("r{i}.jevl"));
        std::fs::write(&path, text + "\n").unwrap();
        let mut command = replay_refund(&path);
        exits_saying(&mut command, 2, expected).await;
    }
}

// ---- 6. Totals that wrap ----

#[tokio::test(flavor = "multi_thread")]
async fn a_price_that_is_not_a_finite_number_is_exit_2() {
    let dir = temp_dir("harden-price");
    let cases = cases(&dir, 2);
    for price in ["NaN", "inf", "-1"] {
        let mut command = eval_fake(&cases, &dir.join("r.json"));
        command.arg(format!("--price-per-million-input={price}"));
        let output = run(&mut command).await;
        expect::exit_code_of(price, &output, 2);
        expect::contains_of(price, &stderr(&output), "--price-per-million-input");
    }
}
