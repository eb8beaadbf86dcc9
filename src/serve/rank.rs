//! `POST /v1/rank`: the shown top k of each impression, drawn by the exploration policy
//! (`--explore`) from a top-k model's scores, with the exact propensity of each shown
//! item at its position.

use super::api_error::ApiError;
use super::exploration::Exploration;
use super::served_model::ServedModel;
use axum::http::StatusCode;
use serde::Serialize;

/// How `/v1/rank` draws its slates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RankPolicy {
    /// The exploration policy.
    pub exploration: Exploration,
    /// `--explore-seed`: with the request's id, seeds each request's draws.
    pub seed: u64,
}

/// The answer for one impression.
#[derive(Debug, Serialize)]
struct RankAnswer<'a> {
    id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    /// The items shown, by name, position 1 first.
    shown: Vec<&'a str>,
    /// Their indices among the model's labels.
    items: &'a [u32],
    /// Their scores.
    scores: Vec<f64>,
    /// `P(item at its position)` under the policy.
    propensities: &'a [f64],
    /// The probability of the whole ordered slate.
    slate_propensity: f64,
    /// The policy (`greedy`, `epsilon-greedy:E`, `softmax:T`).
    explore: String,
    model_version: u64,
}

/// Ranks every impression of `records`: one JSON answer per impression, in order.
pub fn rank(
    model: &ServedModel,
    records: &[&[u8]],
    policy: RankPolicy,
) -> Result<Vec<Vec<u8>>, ApiError> {
    let Some(k) = model.top_k() else {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_topk",
            "this model is not a top-k booster (--algo topk-bbm or topk-adaptive): /v1/rank ranks for top-k models; use /v1/predict",
        ));
    };
    let labels = &model.schema().labels;
    // A followed model may show more items than the one serve started with.
    policy
        .exploration
        .validate(labels.len(), k)
        .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "unsupported_explore", e))?;
    let explore = policy.exploration.to_string();
    let scored = model.rank_scores(records)?;
    let mut out = Vec::with_capacity(scored.len());
    for s in scored {
        let slate = policy.exploration.draw(&s.scores, k, s.id, policy.seed);
        let answer = RankAnswer {
            id: s.id,
            key: s.key.as_deref(),
            shown: slate
                .items
                .iter()
                .map(|&a| labels.get(a as usize).map_or("", String::as_str))
                .collect(),
            items: &slate.items,
            scores: slate.items.iter().map(|&a| s.scores[a as usize]).collect(),
            propensities: &slate.propensities,
            slate_propensity: slate.slate_propensity,
            explore: explore.clone(),
            model_version: s.version,
        };
        out.push(serde_json::to_vec(&answer).map_err(|e| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
        })?);
    }
    Ok(out)
}
