"""Shared fixtures (run the CLI in-process and capture what it prints and its exit status), and
the ``slow`` marker: which tests ``make test-fast`` leaves out."""

from __future__ import annotations

import gc
import json
import os
from collections import Counter
from dataclasses import dataclass
from itertools import count
from pathlib import Path

import pytest

# pytest-xdist gives its workers COLUMNS=80, and Rich fixes a console's width from COLUMNS when
# the console is made (whichgpu.cli.common's, at its first import): a worker would then print
# every table 80 wide whatever a test sets. Without it the console reads COLUMNS on each print
# (the cli fixture sets 100), as in a run without xdist.
os.environ.pop("COLUMNS", None)

from cli_commands import built_once
from whichgpu.cli import main

# The price store on both engines (fixtures store, store_url, pg_url): store_backends.py; the
# shipped prices seeded once per process and copied into each empty store: seeded_store.py.
# No test writes into the checkout: checkout_guard.py. The browser tests' server, Chromium and
# tabs, one server and one Chromium per test process: browser_session.py.
# --dist loadgroup's controller with its bookkeeping kept as counts: xdist_schedule.py.
pytest_plugins = ["store_backends", "seeded_store", "checkout_guard", "browser_session",
                  "xdist_schedule"]
# Each test's CPU seconds, written where WHICHGPU_TEST_CPU says: cpu_times.py.
if os.environ.get("WHICHGPU_TEST_CPU"):
    pytest_plugins.append("cpu_times")

TESTS = Path(__file__).resolve().parent

# The integration tests, marked ``slow``: ``make test-fast`` (``pytest -m "not slow"``) leaves
# them out, ``make test`` runs everything. A key is a file's path under tests/ (every test in it)
# or "folder/file.py::test_name" (that test, all its parameters). Every test on PostgreSQL is
# slow too (it asks for ``pg_url``, directly or through the ``store_url``/``store`` fixtures), so
# test-fast needs no PostgreSQL. A new file is fast unless listed here or it says
# ``pytestmark = pytest.mark.slow``; ``tests/project/test_suite_markers.py`` checks every key
# exists.
_FULL = "full recommendations (over 1 s of CPU)"
_CPU = "over 0.4 s of CPU"
_WAITS = "waits out a real network deadline (a fake server on a socket)"
SLOW: dict[str, str] = {
    # longest first (the order the files start in under xdist)
    "estimate/speed/test_speed_calibration.py"
    "": "refits the speed constants (make calibrate --check)",
    # then the browser files SPLIT deals into parts, so that their parts start before the
    # shorter files (layout about 200 CPU-s, axe about 160, with Chromium and the served app:
    # tests/cpu_times.py on a loaded machine, 2026-12-07)
    "web/test_web_layout.py": "a real browser (Chromium) at phone and desktop sizes",
    "web/test_web_axe.py": "axe-core in a real browser (Chromium), every page at two sizes",
    "web/test_web_advisor_parity.py": "every recommend question of the answer set through the "
    "advisor's controls in a real browser (Chromium)",
    "estimate/speed/test_serving_calibration.py"
    "": "refits the serving constants (make calibrate-serving)",
    "estimate/speed/test_calibration_memo.py": "estimates rows with the estimate memos off",
    "answers/test_fp8_serving_alternative.py": "three 70B serving recommendations (about "
    "1 CPU-s each)",
    # over 0.4 s each in make test-fast on a quiet machine (2026-12-07, --durations)
    "advise/test_rate_layouts_kept.py::test_another_rate_searches_no_max_rate_again": "two "
    "serving-at-a-rate recommendations over the catalog (1.9 s)",
    "estimate/validation/test_serving_e2e_tails.py": "simulates the p99 end-to-end rows once "
    "for the file (1.4 s of set-up)",
    "project/test_tests_import_no_test_file.py": "parses every test file (1.9 s)",
    "estimate/speed/test_serving_kv_read_not_hidden.py::test_max_throughput_errors_stay_where_"
    "the_kv_read_put_them": "estimates every serving row (0.9 s)",
    "estimate/validation/test_validation_reporting.py::test_validate_speed_prints_engine_"
    "architecture_and_leave_one"
    "_out_tables": "leave-one-GPU-out and leave-one-source-out refits",
    "estimate/validation/test_validation_reporting.py::test_leaving_a_gpu_out_refits_without_it_"
    "and_restores_the_"
    "constants": "a leave-one-GPU-out refit",
    "export/test_export_launchers.py"
    "": "loads every export with SkyPilot and dstack in the launchers' "
                                "venv (subprocesses)",
    "web/test_web_browser.py": "a real browser (Chromium) against whichgpu serve",
    "web/test_web_no_cut_tables.py": "a real browser (Chromium) at laptop width",
    "web/test_web_advisor_controls.py": _FULL,
    "web/test_web_fits_page.py::test_the_page_lists_what_the_api_lists_in_its_order": _FULL,
    "web/test_web_fits_page.py::test_sorting_and_a_card_known_by_its_memory": _FULL,
    "web/test_web_request_walk.py::test_generated_controls_ask_the_question": _FULL,
    "web/test_web_serving_binds.py::test_the_shares_are_the_apis_numbers": _FULL,
    "web/test_web_serving_binds.py::test_the_picture_in_french": _FULL,
    "web/test_web_fits_page.py::test_the_fits_page_in_a_browser": "a real browser (Chromium)",
    "web/test_web_serving_binds.py::test_the_picture_is_readable_at_both_sizes":
        "a real browser (Chromium) at two sizes",
    "web/test_web_no_cli_flags.py::test_export_refusals_name_the_pages_controls_never_a_flag":
        "every export refusal, through the page, in each language",
    "web/test_fuzz_api.py": "a fuzzer (schemathesis) on the REST API",
    "web/test_web_schema.py": "a fuzzer (schemathesis) on the REST API (its cases are built "
                              "when the file is collected)",
    "cli/test_fuzz_cli.py": "a fuzzer (hypothesis) on the command line",
    "agents/test_fuzz_mcp.py": "odd numbers in every tool's arguments, over HTTP to a served app",
    "web/test_fuzz_writes.py": "a fuzzer (hypothesis) on the token-guarded price import",
    "agents/test_mcp_server.py": "the MCP SDK's client over stdio (a subprocess) and HTTP",
    "answers/test_answers_identical.py"
    "": "21 whole answers, each against its record and the reference",
    "catalog/prices/test_prices_fuzz.py": "a fuzzer (hypothesis) on the price files",
    "catalog/prices/test_prices_concurrency.py"
    "": "two refreshes and readers at once, on SQLite and PostgreSQL",
    "web/test_serve_workers.py": "whichgpu serve with workers, in subprocesses",
    "web/test_web_ops.py::test_metrics_show_price_age_and_a_refresh_run_by_another_process":
        "a refresh in another process",
    "base/test_public_api.py::test_the_readme_flow_runs_and_agrees_with_the_answer_layer":
        "the README's flow in a fresh interpreter",
    "web/test_web_answer_words.py::test_a_list_cut_short_says_how_many_more_and_shows_them":
        "many recommendations through the page",
    # Not integration, but each over 1 s of CPU (measured with time.process_time under
    # pytest-xdist, shared machine): full recommendations, often asked on several surfaces.
    "advise/test_advise_serving.py": _FULL,
    "advise/test_rate_layout_bound.py::test_the_whole_catalog_answer_is_the_same_with_fewer_"
    "searches": _FULL,
    "advise/test_serving_alone_fastest.py::test_a_sequence_never_decodes_faster_in_a_batch":
        "speeds at 8 batches for every configuration of three whole-catalog answers",
    "web/test_web_answer_words.py": _FULL,
    "answers/test_answers_parity.py"
    "": "the same questions through the CLI, the REST API and the page",
    "catalog/prices/test_prices_imports.py": _FULL,
    "catalog/test_catalog_question_cards.py::test_recommend_never_ranks_them_without_an_"
    "offer_and_quotes_only_published_prices": _FULL,
    "cli/test_cli_advise.py": _FULL,
    "web/test_web_gpu_notes_fr.py::test_the_french_gpu_page_has_no_english_note":
        "every GPU page in French (10 s in all)",
    "web/test_web_inputs.py::test_a_stale_unit_is_read_in_the_workloads_own": _FULL,
    "web/test_web_i18n.py::test_the_usual_bad_input_reasons_have_french": "30 pages in French",
    "web/test_web_i18n.py::test_french_pages_have_no_unmarked_english": _FULL,
    "web/test_web_pages.py::test_every_page_renders_in_both_languages": _FULL,
    "web/test_web_pages.py::test_every_asset_is_local": _FULL,
    "web/test_web_pages.py::test_the_largest_accepted_numbers_render": _FULL,
    "web/test_web_pages.py::test_huge_numbers_are_a_message_not_a_500": _FULL,
    "catalog/prices/test_prices_selection.py::test_a_narrowed_read_gives_the_same_recommendation_"
    "as_every_"
    "offer": _FULL,
    "catalog/prices/test_prices_market.py::test_the_recommendation_is_priced_from_the_market_"
    "snapshot_and_says"
    "_so": _FULL,
    "catalog/prices/test_prices_market.py::test_the_headline_recommendation_never_prices_a_spot_"
    "only_offer_as_"
    "on_demand": _FULL,
    "cost/test_spot.py::test_spot_serving_never_costs_less_than_its_replicas_uninterrupted": _FULL,
    "cost/test_spot.py::test_zero_with_a_unit_means_no_checkpoints": _FULL,
    "cost/test_spot.py::test_rate_sized_serving_prices_spot_with_spares_beside_on_demand": _FULL,
    "web/test_web_hostile_requests.py::test_every_api_answer_is_strict_json": _FULL,
    "cli/test_cli_bad_files_and_strict_json.py::test_every_priced_json_answer_parses_"
    "strictly": _FULL,
    "web/test_web_export_button.py::test_the_download_is_the_command_lines_export": _FULL,
    "estimate/validation/test_validation_tables.py::test_validation_page_accuracy_tables_match_the_"
    "validation":
        "the whole validation, for the README's tables",
    "web/test_web_no_cli_flags.py::test_the_command_line_still_says_its_flags": _FULL,
    "web/test_web_api.py::test_bounds_let_large_real_jobs_through": _FULL,
    "advise/test_advise.py::test_s29_more_than_80_gb_means_several_cards_or_a_bigger_one": _FULL,
    "web/test_web_inputs.py::test_negative_hours_on_the_advisor_leave_rent_or_buy_out_and_say_why":
        _FULL,
    "bench/test_bench_profile.py::test_recommend_uses_the_profile_for_the_gpu_it_measured": _FULL,
    "web/test_web_cli_hints.py::test_calibrated_hint_asks_the_cli_for_the_same_profile": _FULL,
    "web/test_web_no_cli_flags.py::test_no_engine_message_writes_a_whichgpu_flag_itself": _FULL,
    "catalog/test_runs_answers.py::test_recommend_uses_the_runs_and_names_them": _FULL,
    "project/test_docs_python.py::test_the_block_runs": _FULL,
    # make test-fast within a minute on 2 cores: each of these took over 0.4 s of CPU (most
    # ask for whole recommendations on several surfaces), measured per test with
    # time.process_time plus waited children under pytest-xdist, 2026-12-07, shared machine.
    # A file named whole had every test over it.
    "web/test_web_alive.py::test_the_page_shows_it_is_working_while_the_answer_is_computed": _CPU,
    "answers/test_assumptions_said.py::test_the_json_states_the_amount_and_its_unit": _CPU,
    "web/test_web_no_internal_words.py::test_no_page_shows_a_raw_key_or_a_kernel_name": _CPU,
    "advise/test_machines_as_sold.py::test_every_option_is_machines_its_offer_sells": _CPU,
    "web/test_web_memo_accounting.py::test_the_memo_counts_the_memory_a_pasted_config_answer_holds"
    "": _CPU,
    "web/test_web_vs_api.py": _CPU,
    "estimate/test_mixed_cards.py::test_the_advisor_shows_your_machine": _CPU,
    "answers/test_fits.py::test_every_preset_is_tried_by_default": _CPU,
    "estimate/test_mixed_cards.py::test_recommend_a_list_of_one_card_is_your_card_counted": _CPU,
    "web/test_web_request_walk.py::test_every_request_field_has_a_control_or_a_reason": _CPU,
    "advise/test_spot_separate_machines.py": _CPU,
    "advise/test_token_shares.py::test_a_share_option_exports_as_that_many_runs_not_a_"
    "service": _CPU,
    "cost/test_vs_api.py::test_cached_tokens_must_be_a_plausible_whole_number": _CPU,
    "advise/test_machines_as_sold.py::test_a_tensor_parallel_export_asks_for_one_machine_of_that_"
    "size"
    "": _CPU,
    "estimate/test_mixed_cards.py::test_recommend_says_what_your_machine_of_different_cards_"
    "does": _CPU,
    "catalog/prices/test_store_backends_outage.py": _CPU,
    "advise/test_token_shares.py::test_shares_on_spot_are_interrupted_one_machine_at_a_time": _CPU,
    "project/test_import_cycles.py::test_no_import_cycle_through_lazy_imports": _CPU,
    "cost/test_vs_api.py::test_a_feed_file_replaces_the_table_and_a_bad_one_is_one_line": _CPU,
    "advise/test_capacity_flag.py::test_the_ceiling_can_be_overridden": _CPU,
    "advise/test_capacity_flag.py::test_the_million_user_question_is_flagged_with_the_machines_it_"
    "needs"
    "": _CPU,
    "catalog/prices/test_store_damaged_rows.py::test_the_web_answers_on_the_damaged_store": _CPU,
    "project/test_layers.py::test_nothing_outside_cli_imports_cli": _CPU,
    "catalog/test_gpu_resolution.py::test_suggestions_are_the_same_under_every_hash_seed": _CPU,
    "web/test_web_serving_binds.py": _CPU,
    "web/test_profiles_rest.py::test_a_named_profile_answers_as_the_command_line_does": _CPU,
    "catalog/prices/test_store_backends_kill.py": _CPU,
    "advise/test_machines_as_sold.py::test_the_export_launches_the_machines_the_answer_shows": _CPU,
    "advise/test_disaggregation.py::test_a_split_on_one_card_is_compared_with_that_card_serving_"
    "together"
    "": _CPU,
    "project/test_import_cycles.py::test_no_import_cycle_when_modules_load": _CPU,
    "project/test_import_cycles.py::test_the_lazy_graph_holds_the_imports_inside_functions": _CPU,
    "answers/test_assumptions_said.py::test_rest_and_the_page_say_it_in_english_and_french": _CPU,
    "web/test_web_export_button.py": _CPU,
    "advise/test_token_shares.py::test_when_time_matters_the_fastest_answer_is_a_split": _CPU,
    "cost/test_vs_api.py::test_recommend_vs_api_prices_the_best_option_against_the_providers": _CPU,
    "web/test_web_no_internal_words.py::test_the_own_card_line_says_its_speed_in_words": _CPU,
    "advise/test_disaggregation.py::test_the_advisor_page_says_the_split_in_english_and_"
    "french": _CPU,
    "advise/test_disaggregation.py::test_at_one_request_per_second_serving_together_wins_and_says_"
    "why"
    "": _CPU,
    "advise/test_token_shares.py::test_a_share_takes_its_part_of_the_time_and_pays_each_machines_"
    "setup"
    "": _CPU,
    "advise/test_disaggregation.py::test_the_json_names_the_ratio_the_gpus_and_the_kv_"
    "transfer": _CPU,
    "advise/test_capacity_flag.py::test_rest_and_the_page_flag_it_in_english_and_french": _CPU,
    "advise/test_machines_as_sold.py::test_two_linked_cards_are_never_two_one_card_hosts": _CPU,
    "answers/test_assumptions_said.py::test_pretraining_2b_on_the_advisor_is_tokens_not_"
    "steps": _CPU,
    "advise/test_capacity_flag.py::test_an_ordinary_answer_is_not_flagged": _CPU,
    "estimate/test_energy.py::test_power_budget_keeps_the_ranked_options_whose_gpus_draw_no_"
    "more": _CPU,
    "advise/test_token_shares.py::test_shares_are_separate_machines_of_the_fewest_gpus_that_hold_"
    "the_mod"
    "el": _CPU,
    "cost/test_vs_api.py::test_rest_recommend_takes_vs_api": _CPU,
    "web/test_web_alive.py::test_continuous_serving_gives_its_monthly_cost": _CPU,
    "agents/test_mcp_energy_vs_api.py::test_the_recommend_summary_points_at_vs_api_and_the_power_"
    "budget"
    "": _CPU,
    "web/test_web_api.py::test_checklist_is_the_cli_checklist": _CPU,
    "cli/test_cli_lazy_commands.py::test_a_memory_question_loads_no_prices_web_or_cost": _CPU,
    "advise/test_machines_as_sold.py::test_rest_and_page_show_the_same_machines": _CPU,
    "cost/test_spot.py::test_the_per_gpu_price_ratio_divides_an_instance_by_its_gpus": _CPU,
    "answers/test_assumptions_said.py::test_the_advisor_lets_a_person_set_what_one_image_or_video_"
    "is"
    "": _CPU,
    "web/test_prices_web_cache.py::test_a_new_snapshot_drops_the_cached_selections_and_"
    "answers": _CPU,
    "cost/test_one_price_truth.py::test_rent_or_buy_opens_on_the_market_prices_and_keeps_"
    "them": _CPU,
    "web/test_web_hostile_requests.py::test_a_request_past_its_cpu_budget_is_stopped_and_"
    "refused": _CPU,
    "estimate/test_multi_lora.py::test_advisor_form_has_the_adapters_control_and_recommend_counts_"
    "them"
    "": _CPU,
    "estimate/memory/test_memory_properties.py::test_memory_never_decreases_with_precision_"
    "bits": _CPU,
    "cli/test_cli_lazy_commands.py::test_a_command_loads_when_used_and_walking_the_group_sees_all"
    "": _CPU,
    "cost/test_spot.py::test_a_long_uncheckpointed_job_prints_no_absurd_figure": _CPU,
    "web/test_web_hostile_requests.py::test_a_refusal_is_remembered_for_that_question_only": _CPU,
    "web/test_runs_rest.py::test_with_the_token_runs_are_stored_listed_and_used_by_the_"
    "answers": _CPU,
    "cost/test_spot.py::test_on_demand_winning_because_spot_costs_more_even_uninterrupted_says_so"
    "": _CPU,
    "answers/test_assumptions_said.py::test_what_was_asked_is_marked_asked": _CPU,
    "answers/test_fits.py::test_rest_answers_the_same": _CPU,
    "web/test_profiles_rest.py::test_the_query_wins_over_the_profile": _CPU,
    "catalog/test_user_gpu.py::test_advisor_page_shows_your_card_beside_the_rentals": _CPU,
    "advise/test_advise.py::test_a_pretraining_cluster_from_single_gpu_offers_says_it_is_"
    "assumed": _CPU,
    "web/test_web_ops.py::test_metrics_count_requests_by_route_template_with_latency_and_"
    "errors": _CPU,
    "cli/test_cli_plans_agree.py::test_host_ram_given_means_llamacpp_offload_is_considered": _CPU,
    "cli/test_cli_small_things.py::test_recommend_says_how_many_options_it_leaves_out": _CPU,
    "web/test_prices_web_cache.py::test_the_selection_cache_is_bounded_by_count_and_by_"
    "offers": _CPU,
    "web/test_web_api.py::test_recommend_post_body": _CPU,
    "web/test_web_i18n.py::test_every_message_has_a_french_translation": _CPU,
    "advise/test_advise.py::test_checklist_agrees_with_recommend_and_with_rent_or_buy": _CPU,
    "web/test_web_i18n.py::test_placeholders_survive_translation": _CPU,
    # Over 0.4 s of CPU each in a make test-fast run of 2026-12-07 04:00 UTC (self plus waited
    # children per test, resource.getrusage, 2 xdist workers, shared machine); tests whose
    # cost was their file's module fixture (paid by whichever test runs first) left out.
    "advise/test_exclusion_wording.py::test_too_slow_shows_a_rate_below_the_one_wanted": _CPU,
    "advise/test_rl_ranking.py::test_cli_json_and_table": _CPU,
    "advise/test_rl_ranking.py::test_the_advisor_page_ranks_rl": _CPU,
    "answers/test_recommend_rent_or_buy.py::test_the_cli_says_it_and_the_rest_api_gives_the_"
    "same": _CPU,
    "catalog/prices/test_api_prices_store.py::test_the_advisor_page_says_how_old_its_api_"
    "prices_are": _CPU,
    "catalog/prices/test_api_prices_store.py::test_vs_api_says_where_its_prices_come_from": _CPU,
    "catalog/test_user_gpu.py::test_cli_takes_your_card_on_memory_speed_recommend_and_tco": _CPU,
    "cli/test_cli_estimates.py::test_validate_memory_prints_errors_by_category": _CPU,
    "estimate/speed/test_kernel_db.py::test_each_recommend_option_says_which_path_timed_its_"
    "steps": _CPU,
    "estimate/speed/test_serving_percentile_targets.py::test_recommend_sizes_more_replicas_for_"
    "a_p95_target": _CPU,
    "estimate/speed/test_serving_traffic.py::test_published_p99_ttft_rows_stay_within_the_"
    "measured_error": _CPU,
    "estimate/speed/test_speed_traffic.py::test_rest_gives_the_clis_answer": _CPU,
    "estimate/test_backends_and_builds.py::test_ud_k_xl_files_are_sized_by_their_declared_base_"
    "file_type": _CPU,
    "project/test_engine_parses_no_request_text.py::test_the_engine_packages_parse_no_request_"
    "text": _CPU,
    "web/test_web_french_leaks.py::test_the_french_advisor_page_has_no_english_billing_words": _CPU,
    # real sockets and deadlines: each waits out a timeout of about a second on purpose
    "models/test_hub_lookup_deadlines.py::test_a_failing_hub_is_asked_once_not_retried": _WAITS,
    "models/test_hub_lookup_deadlines.py::test_a_silent_hub_costs_each_id_its_own_deadline_and_the_"
    "failed_id_"
    "is_kept": _WAITS,
    "models/test_hub_lookup_deadlines.py::test_a_download_that_keeps_arriving_stops_at_the_"
    "deadline": _WAITS,
    "models/test_hub_lookup_deadlines.py::test_a_silent_hub_frees_the_worker_at_the_"
    "deadline": _WAITS,
    "models/test_hub_breaker.py::test_one_slow_repository_costs_only_its_own_request": _WAITS,
    "catalog/prices/test_prices_market.py::test_a_download_that_keeps_trickling_stops_at_the_whole_"
    "deadline":
        _WAITS,
    "web/test_web_schedule.py::test_the_service_runs_the_loop_in_its_lifespan": _WAITS,
    "catalog/prices/test_prices_market.py::test_a_file_cut_at_a_row_boundary_is_refused_against_"
    "the_last_good_"
    "refresh": _CPU,
    "project/test_vocabulary_not_literals.py::test_tasks_and_engines_compare_with_members": _CPU,
    # this stop's heavy additions (make test-fast measured with --durations on an idle clone)
    "estimate/speed/test_band_residuals.py": "refits the speed constants once per GPU left out "
                                             "(about 8 s of set-up)",
    "advise/test_goodput_ranking.py": "serving recommendations that simulate a request stream per "
                                      "option (about 9 s)",
    "estimate/validation/test_serving_tail_rows.py": "simulates every published tail row's "
                                                     "request stream",
    "cli/test_cli_start_imports.py": "fresh interpreters (subprocesses) to read what start-up "
                                     "imports",
    # the program's quick exit (cli/process.py): each runs whichgpu in a fresh interpreter
    "cli/test_cli_process_exit.py::test_a_long_answer_reaches_stdout_whole_and_exit_handlers_"
    "run": "whichgpu in a subprocess",
    "cli/test_cli_process_exit.py::test_bad_input_still_exits_2_with_its_one_line":
        "whichgpu in a subprocess",
    "cli/test_cli_process_exit.py::test_the_answer_runs_without_the_collector_and_a_server_"
    "turns_it_on": "whichgpu in two subprocesses",
    "catalog/prices/test_prices_market.py::test_a_bad_file_is_rejected_with_a_reason_and_the_"
    "previous_snapshot_kept": _CPU,
    "estimate/speed/test_expert_parallel_option.py::test_recommend_tries_the_ep_layout_on_"
    "several_gpus": _CPU,
    # issue 28 (prefill4): builds the validation page's reports (about 1.2 s of CPU)
    "estimate/validation/test_speed_per_engine_table.py::test_the_page_table_counts_every_"
    "scored_prefill_row_once": _CPU,
    # issue 29 (video6): predicts every held-out image and video row of both validation files
    "estimate/validation/test_image_video_targets_held_out.py": _CPU,
    # issue 35 (suite7): leave-one-source-out refits of four sources (about 0.3 CPU-s each)
    "estimate/speed/test_serving_loso_memo.py": "serving leave-one-source-out refits",
    "estimate/speed/test_refit_typical_only.py::test_typical_values_are_exactly_the_full_"
    "estimates": _CPU,
    # vsapi7: a daily volume kept up against the APIs (full recommendations, the page)
    "answers/test_daily_volume_vs_api.py": _FULL,
    "web/test_web_vs_api_daily.py": _CPU,
    # issue 35 (suite35d): over 0.4 s of CPU both in a make test-fast run (2 xdist workers,
    # 2026-12-07 23:20 UTC) and again alone after a warm-up (one process, after other web and
    # recommend tests had loaded what they share), time.process_time plus waited children per
    # test, shared machine; the two figures are given (alone / in the suite). A test whose
    # cost is its file's module fixture is marked with its file.
    "estimate/validation/test_cv_kept_fit.py::test_rows_whose_constant_only_their_gpu_fits_are_"
    "kept_apart": "the leave-one-GPU-out validation for MI300X (1.8 / 1.3 CPU-s)",
    "web/test_web_daily_verdict.py::test_a_daily_volume_verdict_says_its_cost_is_a_days":
        "a daily-volume recommendation through the page (1.8 / 1.3 CPU-s)",
    "project/test_browser_files_grouped.py::test_each_browser_file_is_one_group_or_its_parts_"
    "in_the_node_ids_xdist_schedules_by": "collects the browser files in process "
    "(1.5 / 1.0 CPU-s)",
    "advise/test_disaggregation_machines.py::test_the_split_says_where_each_pool_is_bought":
        "a disaggregated serving recommendation (1.1 / 1.2 CPU-s)",
    "answers/test_whole_answers_said.py::test_a_rate_sized_with_adapters_says_their_slots_and_"
    "the_compute_left_out": "a rate-sized recommendation with adapters (1.0 / 1.2 CPU-s)",
    "answers/test_whole_answers_said.py::test_recommend_for_users_with_many_adapters_answers":
        "a recommendation with many adapters (0.8 / 0.9 CPU-s)",
    "estimate/speed/test_serving_wide_range_reasons.py::test_a_recommendation_at_a_request_rate_"
    "says_why_each_wide_latency_range_is_wide": "a recommendation at a request rate "
                                                "(0.9 / 1.2 CPU-s)",
    "advise/test_token_shares.py::test_a_share_option_replaces_the_tensor_parallel_one_only_"
    "where_it_ranks_better": "the file's whole-catalog answer (its module fixture; 0.9 / 1.2 "
                             "CPU-s); every other test of the file is marked already",
    "answers/test_vs_api_prices_of_the_model_asked.py": "two vs-API recommendations "
                                                        "(0.8 and 0.5 / 0.8 and 0.8 CPU-s)",
    "advise/test_offer_link_matches_speed.py::test_recommend_and_speed_name_the_same_link_for_"
    "4_x_3090": "a recommendation over linked cards (0.7 / 0.8 CPU-s)",
    "project/test_sources.py::test_every_cited_fact_exists": "reads every file that cites "
                                                             "a fact (0.7 / 0.6 CPU-s)",
    "estimate/memory/test_memory_ranges.py": "the memory validation and make calibrate's "
                                             "memory ranges (0.6 / 0.7 CPU-s)",
    "answers/test_advice_loads_export_when_asked.py::test_the_answer_module_does_not_load_the_"
    "export": "a fresh interpreter (0.6 / 0.8 CPU-s)",
    "advise/test_checklist_reuses_recommendation.py::test_other_hours_and_horizon_reuse_the_"
    "whole_catalog_recommendation": "whole-catalog checklists (0.6 / 0.5 CPU-s)",
    "advise/test_serving_alone_fastest.py::test_the_shortcut_changes_no_answer_and_asks_fewer_"
    "speeds": "serving recommendations with and without the shortcut (0.6 / 0.4 CPU-s)",
    "cli/test_cli_estimates.py::test_validate_speed_covers_at_least_80_rows":
        "validate speed (0.6 / 1.0 CPU-s)",
    "answers/test_checklist_tco_numbers_typed.py::test_the_checklist_answer_reads_no_text":
        "a whole checklist (0.6 / 0.9 CPU-s)",
    "cli/test_cli_lazy_commands.py::test_help_lists_every_command_without_loading_any":
        "a fresh interpreter (0.5 / 0.5 CPU-s)",
    "web/test_web_layout_charts.py::test_place_label_keeps_every_label_clear_of_the_others_and_"
    "inside": "generated label layouts (hypothesis; 0.5 / 0.6 CPU-s)",
    "bench/test_compare.py::test_a_model_projects_through_the_speed_model_and_checks_the_second_"
    "card": "whichgpu compare through the speed model "
                 "(0.5 / 0.6 CPU-s)",
}


# Tests that share the speed refits' row estimates (tests/refit_cache.py
# shared_row_estimates) run in one worker, in SLOW's order (calibrate.py --check first), so that
# each finds the rows the one before it estimated. On a fresh clone, run apart in two workers
# at once, each estimated them all again: validate speed --json took 59.8 CPU-s alone, 18.5
# after calibrate.py --check (same output, byte for byte; shared machine, 2026-12-07).
SAME_WORKER: dict[str, str] = {
    "estimate/speed/test_speed_calibration.py": "speed-refits",
    "estimate/validation/test_validation_reporting.py::test_validate_speed_prints_engine_"
    "architecture_and_leave_one_out_tables": "speed-refits",
    "estimate/validation/test_validation_reporting.py::test_leaving_a_gpu_out_refits_without_"
    "it_and_restores_the_constants": "speed-refits",
    "estimate/speed/test_band_residuals.py": "speed-refits",
    # the serving refits share their leave-one-source-out residuals (shared_serving_loso):
    # validate serving --json took 9.5 CPU-s alone, 0.6 after calibrate_serving.py --check
    "estimate/speed/test_serving_calibration.py::test_the_toml_is_exactly_what_make_"
    "calibrate_serving_produces": "serving-refits",
    "estimate/speed/test_serving_calibration.py::test_validate_serving_reports_by_engine_and_"
    "gpu_with_the_holdout_apart": "serving-refits",
}


# Browser files whose tests are dealt, in turn, into this many xdist groups ("file#0",
# "file#1", ...) instead of one: each group runs whole in one worker (one Chromium for it, as
# for a whole file), and the groups of one file can run in both workers at once. Whole, each
# of these files kept one worker busy for minutes (layout: 29 tests, about 200 CPU-s; axe:
# four checks of 14 pages, 30 to 55 CPU-s each; the advisor's parity: two languages of 17
# questions). A group costs its worker one more Chromium start (about 1.5 CPU-s).
SPLIT: dict[str, int] = {
    "web/test_web_layout.py": 4,
    "web/test_web_axe.py": 4,
    "web/test_web_advisor_parity.py": 2,
}


def _key_in(item: pytest.Item, table: dict[str, str]) -> str | None:
    """``table``'s value for the test (its "file::name" key, else its file's), or None."""
    rel = _rel(item)
    name = getattr(item, "originalname", None) or item.name
    cls = getattr(item, "cls", None)
    for key in (f"{rel}::{cls.__name__}::{name}" if cls is not None else f"{rel}::{name}", rel):
        if key in table:
            return table[key]
    return None


def _slow_reason(item: pytest.Item) -> str | None:
    """Why ``item`` is slow (from SLOW, or it runs on PostgreSQL), or None."""
    reason = _key_in(item, SLOW)
    if reason is not None:
        return reason
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("store_url") == "postgresql":
        return "on the throwaway PostgreSQL cluster"
    if "pg_url" in getattr(item, "fixturenames", ()):  # asked for directly
        return "on the throwaway PostgreSQL cluster"
    return None


_RELS: dict[str, str] = {}


def _rel(item: pytest.Item) -> str:
    """The test's file relative to tests/ ("folder/file.py"), worked out once per file: each
    test asks it about four times while the suite is collected (5,800 tests; about 1 CPU-s of
    Path arithmetic per xdist worker, 2026-12-07)."""
    path = str(item.path)
    rel = _RELS.get(path)
    if rel is None:
        try:
            rel = Path(path).relative_to(TESTS).as_posix()
        except ValueError:
            rel = path
        _RELS[path] = rel
    return rel


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not slow"`` (``make test-fast``) a file SLOW names whole is not imported:
    every test in it would be deselected anyway, and importing it (schemathesis, Playwright,
    the MCP SDK, hypothesis strategies) cost every xdist worker its share of collection."""
    if config.option.markexpr != "not slow" or collection_path.suffix != ".py":
        return None
    try:
        rel = collection_path.relative_to(TESTS).as_posix()
    except ValueError:
        return None
    return True if rel in SLOW else None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's hook, which reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the listed tests ``slow``; group each file that has a module fixture (SPLIT's
    files in parts), and the tests SAME_WORKER names; order the files: those in SLOW first,
    in SLOW's order (the longest first), then the other files with a slow test, then the
    rest, and among those two the larger groups first. Under pytest-xdist as make runs it
    (``--dist loadgroup --no-loadscope-reorder``: each group, or a test of no group, is
    handed whole to whichever worker runs short, in this order) the long tests start early
    and the short ones fill in around them. (xdist's own order, without
    --no-loadscope-reorder, puts the groups with the most tests first whatever they cost:
    a file of 29 quick tests before calibrate.py --check's 6.)"""
    rank = {key.split("::")[0]: i for i, key in reversed(list(enumerate(SLOW)))}
    file_rank: dict[str, int] = {}
    for item in items:
        reason = _slow_reason(item)
        if reason is not None:
            item.add_marker(pytest.mark.slow(reason=reason))
        rel = _rel(item)
        if item.get_closest_marker("slow") is not None:
            file_rank[rel] = min(file_rank.get(rel, len(rank)), rank.get(rel, len(rank)))
    groups = _groups(items)
    size = Counter(groups.values())
    order = {id(item): i for i, item in enumerate(items)}

    def key(item: pytest.Item) -> tuple[int, int, int]:
        at = file_rank.get(_rel(item), len(rank) + 1)
        group = groups.get(id(item))
        larger_first = 0 if at < len(rank) else -(size[group] if group is not None else 1)
        return at, larger_first, order[id(item)]

    items.sort(key=key)
    loadgroup = bool(getattr(config.option, "loadgroup", False)
                     or getattr(config.option, "dist", None) == "loadgroup")
    for item in items:
        group = groups.get(id(item))
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
            if loadgroup:
                _name_group(item, group)


def _groups(items: list[pytest.Item]) -> dict[int, str]:
    """{id(item): its xdist group} for the tests that have one: SAME_WORKER's, else its
    file's if it uses a module fixture (a file SPLIT names: its part, the tests dealt in
    turn)."""
    out: dict[int, str] = {}
    dealt: dict[str, int] = {}
    for item in items:
        group = _key_in(item, SAME_WORKER)
        if group is None and _has_module_fixture(item):
            group = rel = _rel(item)
            if rel in SPLIT:
                n = dealt[rel] = dealt.get(rel, -1) + 1
                group = f"{rel}#{n % SPLIT[rel]}"
        if group is not None:
            out[id(item)] = group
    return out


def _name_group(item: pytest.Item, group: str) -> None:
    """Put "@group" at the end of the test's node id, which is what ``--dist loadgroup``
    schedules by (one worker per group). pytest-xdist 3.8 does it by assigning ``_nodeid``,
    which pytest 9 no longer reads (its node id is ``_id``): every group was split between the
    workers, each making a file's module fixture (a Chromium, a served app, a refit) again or
    waiting on the other's refit lock. Left to xdist where it works (pytest before 9)."""
    if "@" in item.nodeid:
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest < 9: xdist's own suffix works
        return
    item._id = NodeId.parse(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]


def _has_module_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a fixture of module (or class) scope, defined in its own file or
    in a shared plugin (browser_session.py's Chromium): a served app, a browser, a computed
    table. Under ``--dist loadgroup`` such a file runs whole in one worker, so that the
    fixture is made once; the other tests are handed out one by one to whichever worker is
    free. (Until 2026-12-07 only a file's own fixtures counted: the browser files were split
    between the workers, each starting its own Chromium for them and its served app
    rendering the same pages again; test_web_layout.py and test_web_axe.py ran in both.)"""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(fixturedef.scope in ("module", "class")
               for defs in info.name2fixturedefs.values() for fixturedef in defs)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything collection made (modules, catalogs, the test items) lives for the whole run:
    freeze it out of the cyclic garbage collector, whose full collections would otherwise
    walk it again and again (the web's price refresh calls gc.collect(); the web tests took
    about 30 % less CPU with this)."""
    gc.freeze()


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


@pytest.fixture(scope="session")
def _homes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder under which the tests that ask for no ``tmp_path`` get their homes."""
    return tmp_path_factory.mktemp("homes", numbered=False)


_home_numbers = count()


# Variables no test may inherit: no network price source, nothing of the developer's own setup.
_UNSET = ("HF_TOKEN", "WHICHGPU_PRICE_STORE", "WHICHGPU_PRICE_MAX_AGE_DAYS", "GPUHUNT_CATALOG_DIR",
          "GPUHUNT_CATALOG_URL", "WHICHGPU_DATABASE_URL", "WHICHGPU_ACCESS_LOG")


@pytest.fixture(autouse=True)
def _isolated_home(request, _homes):
    """Every test gets its own whichgpu home (so its own price store), no network price
    source, and an offline, empty Hugging Face cache. The homes are folders not made yet
    (whichgpu makes its home when it first writes there): under the test's ``tmp_path`` when
    it asks for one, else under ``_homes``, numbered. Making a ``tmp_path`` for every test
    cost each about 1 ms of CPU (pytest lists the ever longer base folder to number the next
    one and points a symlink at it; 3,000 trivial tests in one process: 12.1 CPU-s with it,
    9.2 without, shared machine, 2026-12-07). The environment is set and put back here, not
    through ``monkeypatch``: that fixture for every test (its set-up, its undo log of nine
    variables, its tear-down) cost about 0.1 to 0.2 ms a test (3,000 trivial tests in one
    process, seven runs each way: mean 7.0 CPU-s with it, 6.4 without; shared machine,
    2026-12-07); a test's own ``monkeypatch`` is undone before this fixture puts the rest
    back."""
    if "tmp_path" in request.fixturenames:
        where = request.getfixturevalue("tmp_path")
    else:
        where = _homes / str(next(_home_numbers))
    # A command run in process may set variables for the processes it would start ('serve'
    # sets WHICHGPU_WEB_WARM and the calibration choice for its workers): none outlives its
    # test, so no later test's app warms or calibrates because of an earlier one.
    saved = dict(os.environ)
    env = os.environ
    env["WHICHGPU_HOME"] = str(where / "whichgpu-home")
    env["HF_HOME"] = str(where / "hf-home")
    env["HF_HUB_OFFLINE"] = "1"
    env["WHICHGPU_OFFLINE"] = "1"  # prices: no network source may run
    for name in _UNSET:
        if name in env:
            del env[name]
    yield
    # only what changed is put back (clear() and update() unset and set every variable again)
    for name in [name for name in env if name not in saved]:
        del env[name]
    for name, value in saved.items():
        if env.get(name) != value:
            env[name] = value


@pytest.fixture
def cli(capsys, monkeypatch):
    """``cli("gpus", "--json")`` runs whichgpu and returns its exit code, stdout and stderr.
    Each command's click command is built once per process (tests/cli_commands.py)."""
    from whichgpu.cli import lazy

    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(lazy, "load_module", built_once(lazy.load_module))

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def _web_client():
    """One web app and its in-process client for the whole run (per xdist worker): making
    them and running the app's start-up cost about 0.05 s of CPU, and 263 tests ask for
    ``web``. No test changes the app itself: those that need another calibration, access log
    or price store make their own app (tests/web/test_web_ops.py, test_web_api.py's calibration
    test, which sets the shared calibration choice back)."""
    from fastapi.testclient import TestClient

    from whichgpu.web.app import create_app

    with TestClient(create_app(), raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def web(_web_client):
    """A client of the web app (in-process, no socket), with a fresh price cache, Hub cache,
    list of refused questions and no cookies: each test reads its own store (under its own
    home, which the app finds on each request)."""
    from whichgpu.web import resolve, services, work

    def fresh() -> None:
        services.clear_cache()
        resolve.clear_hub_cache()  # Hub answers and failures kept by an earlier test
        work.clear_refused()
        _web_client.cookies.clear()

    fresh()
    yield _web_client
    fresh()
