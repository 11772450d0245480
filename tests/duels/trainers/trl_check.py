"""Run inside the trl virtualenv: hand an exported EnvDuels TRL class to the real GRPOTrainer
(CPU, a tiny model built from a config, a tokenizer built here: nothing is downloaded), let it
validate the class and run one training step, then play the class directly. Prints `RESULT {...}`.

argv: the package's module name.
"""

import importlib
import json
import sys
import tempfile

from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen3_chat_template

SPECIAL = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
           "<think>", "</think>"]


def tiny_tokenizer():
    words = ["system", "user", "assistant", "tool", "act", "action", "say", "the", "number",
             "0", "1", "2", "3", "4", "yes", "no", "{", "}", ":", '"', ",", "name", "arguments"]
    vocab = {token: index for index, token in enumerate(SPECIAL + words)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>",
                                        pad_token="<pad>", eos_token="<|im_end|>",
                                        additional_special_tokens=SPECIAL[2:])
    tokenizer.chat_template = qwen3_chat_template
    tokenizer.padding_side = "left"
    return tokenizer


def main():
    package = importlib.import_module(sys.argv[1])
    rows = package.dataset_rows(seeds=2)
    tokenizer = tiny_tokenizer()
    model = Qwen3ForCausalLM(Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id))
    with tempfile.TemporaryDirectory() as out:
        args = GRPOConfig(output_dir=out, per_device_train_batch_size=2, num_generations=2,
                          max_completion_length=8, max_steps=1, use_cpu=True, report_to="none",
                          save_strategy="no", logging_steps=1, max_tool_calling_iterations=2)
        trainer = GRPOTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows),
                              processing_class=tokenizer,
                              environment_factory=package.EnvDuelsTRLEnv)
        tools = sorted(tool.__name__ for tool in trainer.tools)
        trained = trainer.train()
        reward_names = list(trainer.reward_func_names)
    env = package.EnvDuelsTRLEnv()
    first = env.reset(**rows[0])
    number = first.split()[-1].rstrip(".")
    wrong = env.act("not " + number)
    before = env.get_reward()
    right = env.act(number)
    after = env.act(number)
    print("RESULT " + json.dumps({
        "tools": tools, "reward_names": reward_names, "steps": trained.global_step,
        "first": first, "wrong": wrong, "before": before, "right": right,
        "reward": env.get_reward(), "after": after, "rows": len(rows)}), flush=True)


if __name__ == "__main__":
    main()
